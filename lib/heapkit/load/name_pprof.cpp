// SPDX-License-Identifier: MIT
#include "heapkit/load/name_pprof.hpp"

#include "heapkit/load/name_frames.hpp"
#include "heapkit/model/pprof_profile.hpp"
#include "heapkit/read/pprof_reader.hpp"
#include "heapkit/util/gzip.hpp"
#include "heapkit/util/try.hpp"

namespace heapkit {

Result<NamedPprof> name_pprof(std::string_view inflated, const std::string& source,
                              const LoadOptions& options, int compress_level) {
    return catching([&]() -> Result<NamedPprof> {
        HEAPKIT_TRY_ASSIGN(PprofFile file, read_pprof(inflated, source));
        Loaded loaded;
        HEAPKIT_TRY_ASSIGN(loaded.profile, profile_of_pprof(file, source));
        HEAPKIT_TRY_ASSIGN(SampleType sample, chosen_sample(loaded.profile, options));
        name_frames(loaded, options, sample);
        NamedPprof named;
        auto encoded = add_pprof_names(inflated, file, loaded.profile, &named.added);
        if (!encoded) {
            return fail("{}: {}", source, encoded.error().message);
        }
        named.gzipped = gzip(*encoded, compress_level);
        named.report = std::move(loaded.report);
        return named;
    });
}

} // namespace heapkit
