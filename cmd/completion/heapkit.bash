# SPDX-License-Identifier: MIT
# bash completion for heapkit's tools (jeprof2pprof, heapfold, disable_aslr, jestat,
# heapkit-index), on top of the bash-completion package's helpers. meson installs this
# file once per tool name, since bash-completion loads a command's completion from the
# file named after the command.
# The lists below follow each tool's --help: tests/e2e/test_completion.py fails when a
# flag or a value is in one and not the other.

# Flags of jeprof2pprof (cmd/flags.hpp's add_common_flags and its own) or heapfold.
_heapkit_flags() {
    local common='-h --help -o --output --base --base-stats --sample --stats --free-sites --growth --threads --keep-allocator-frames
        --drop-frames --focus --ignore --hide --keep-clone-suffixes --no-symbolize --binary
        --sysroot --path-map --debug-dir --no-cache --index --max-inflated -q --quiet -v --verbose --strict
        --label-dumps --version'
    case $1 in
    jeprof2pprof) echo "$common --compress-level" ;;
    heapfold)
        echo "$common --frame --annotate-inline --svg --title --width --minwidth
            --countname --colors --inverted --reverse --text --html --lifetimes --nodecount"
        ;;
    esac
}

# COMPREPLY: those of the words in $1 that start with the word being completed ($cur).
_heapkit_reply() {
    mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
}

_heapkit_tool() {
    local cur prev words cword split
    _init_completion -s || return

    # An option's value: what the tool accepts, where there is a list of it.
    case $prev in
    -o | --output | --base | --binary | --stats | --base-stats)
        _filedir
        return
        ;;
    --sysroot | --debug-dir)
        _filedir -d
        return
        ;;
    --sample)
        _heapkit_reply 'inuse_space inuse_objects alloc_space alloc_objects temporary_objects
            temporary_space byte_seconds cross_thread_objects cross_thread_space
            fragmentation_space fragmentation_objects'
        return
        ;;
    --frame)
        _heapkit_reply 'function function+line address'
        return
        ;;
    --index)
        _heapkit_reply 'later now never'
        return
        ;;
    --colors)
        _heapkit_reply 'mem hot io red green blue aqua yellow purple orange'
        return
        ;;
    --countname)
        _heapkit_reply 'bytes objects byte-seconds'
        return
        ;;
    --compress-level)
        _heapkit_reply '0 1 2 3 4 5 6 7 8 9'
        return
        ;;
    # Free text (patterns, paths as the dump spells them, numbers): nothing to offer.
    --drop-frames | --focus | --ignore | --hide | --path-map | --title | --width | --minwidth | \
        --nodecount | --max-inflated | -h | --help | --version)
        return
        ;;
    esac
    $split && return

    if [[ $cur == -* ]]; then
        _heapkit_reply "$(_heapkit_flags "${words[0]##*/}")"
        return
    fi
    # The dumps: jeprof.<pid>.<seq>.f.heap, gzipped or not, jeprof --raw files and pprof
    # profiles (*.pb.gz): any name.
    _filedir
}
complete -F _heapkit_tool jeprof2pprof heapfold

# jestat STATS [--dump HEAP] [--smaps FILE] [--json|--svg] [-o FILE]: every value is a file.
_heapkit_jestat() {
    local cur prev words cword
    _init_completion || return
    case $prev in
    -h | --help | --version) return ;;
    esac
    if [[ $cur == -* ]]; then
        _heapkit_reply '-h --help --dump --smaps --json --svg -o --output --version'
        return
    fi
    _filedir
}
complete -F _heapkit_jestat jestat

# heapkit-index [--cache-dir DIR] [--debug-dir DIR]... [--sysroot DIR] [-q] [--background]
#               [--stats] [--prune] [FILE...]
_heapkit_index() {
    local cur prev words cword
    _init_completion || return
    case $prev in
    -h | --help | --version) return ;;
    --cache-dir | --debug-dir | --sysroot)
        _filedir -d
        return
        ;;
    esac
    if [[ $cur == -* ]]; then
        _heapkit_reply '-h --help --cache-dir --debug-dir --sysroot -q --quiet --background --stats --prune --version'
        return
    fi
    _filedir
}
complete -F _heapkit_index heapkit-index

# disable_aslr [--] PROGRAM [ARGS...]: its own flags only first, then PROGRAM's completion.
_heapkit_disable_aslr() {
    local cur prev words cword
    _init_completion || return

    if ((cword == 1)) && [[ $cur == -* ]]; then
        _heapkit_reply '--help --version --'
        return
    fi
    case ${words[1]} in
    --help | --version) return ;;
    --) ((cword >= 2)) && _command_offset 2 ;;
    *) _command_offset 1 ;;
    esac
}
complete -F _heapkit_disable_aslr disable_aslr
