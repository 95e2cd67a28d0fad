// SPDX-License-Identifier: MIT
// Which process of a tree that inherited LD_PRELOAD the agent serves: the loader decides in
// its constructor, with nothing but the C library and without allocating.
#pragma once

namespace heapkit::agent {

enum class Meant {
    no,        // another process of the tree is served (or this one is a wrapper): silent
    yes,       // this is the program the operator meant: it says why when it cannot serve
    uncertain, // a wrapper's child (a script may run many programs), or an ancestor that
               // could not be read (another user's, or not dumpable): serve when jemalloc
               // profiles this process, else say nothing
};

// HEAPKIT_PROGRAM's name when set (the executable's file name or argv[0]'s); otherwise the
// first process of the tree that is not a wrapper. A wrapper (timeout, sudo, su, runuser,
// a shell running a script, ...) forks the program it runs and waits for it: it is passed
// over, and the program it started is served instead.
Meant meant_process();

} // namespace heapkit::agent
