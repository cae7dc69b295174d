# bash completion for tilestream: commands, then each command's options as
# its own --help lists them (always in step with the binary), else files.
_tilestream() {
    local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]:-}
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "run compare bench info ops --help --version" -- "$cur"))
        return
    fi
    case "$cur" in
        -*) COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -oE -- '--[a-z0-9-]+' | sort -u)" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
}
complete -o filenames -F _tilestream tilestream
