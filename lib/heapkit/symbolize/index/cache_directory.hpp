// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// Removes the caches earlier versions kept in `directory` (the frame caches,
// "frames-<version>/": every address's answer is now in the address indexes), so that
// they stop taking the user's disk. Only regular files and links in them are removed,
// and a directory only once empty; whatever fails is left.
void remove_retired_caches(const std::string& directory);

// A cache directory this process's effective user can write, for a service that may have
// switched users since it read its environment: `configured` when it exists or can be
// made (mode 0700) and is writable and the user's alone (check_private_directory); else
// $XDG_CACHE_HOME/heapkit, else $HOME/.cache/heapkit, each only when the user's own and writable;
// else the user's own $TMPDIR/heapkit-cache-UID (or under /tmp), made mode 0700 once and
// used again by every later start, only when it is a directory of the user's (not a link;
// made 0700 if it was not). Empty when none can be had. `fallback_reason` tells why
// `configured` was passed over ("not writable by uid 65534"), and why no cache is kept.
std::string writable_cache_directory(const std::string& configured, std::string& fallback_reason);

} // namespace heapkit
