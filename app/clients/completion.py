"""Shell completion for ``pinchtab``, generated from the parser itself, so it never drifts from it.

:func:`verb_table` reads the subparsers (each verb, its one-line summary, its options, and the
words its first argument takes); :func:`bash` and :func:`zsh` turn that table into a script:
``source <(pinchtab completion bash)``, or ``pinchtab completion zsh > "${fpath[1]}/_pinchtab"``.
"""
from __future__ import annotations

import argparse
from typing import NamedTuple

__all__ = ["VerbInfo", "bash", "subparsers", "verb_table", "zsh"]


class VerbInfo(NamedTuple):
    name: str
    summary: str
    options: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()


def subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _words(p: argparse.ArgumentParser) -> tuple[str, ...]:
    """What a verb's first word may be: its declared choices, or a nested command's names."""
    declared = p.get_default("word_choices")
    if declared:
        return tuple(declared)
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return tuple(a.choices)
        if not a.option_strings and a.choices and a.dest != "help":
            return tuple(str(c) for c in a.choices)
    return ()


def verb_table(parser: argparse.ArgumentParser) -> list[VerbInfo]:
    """Every verb once (aliases folded in), in the order they were added."""
    sub = subparsers(parser)
    summaries = {a.dest: a.help or "" for a in sub._choices_actions}
    seen: dict[int, VerbInfo] = {}
    names: dict[int, list[str]] = {}
    for name, p in sub.choices.items():
        names.setdefault(id(p), []).append(name)
        if id(p) in seen:
            continue
        options = tuple(o for a in p._actions for o in a.option_strings if o.startswith("--") and
                        a.help != argparse.SUPPRESS)
        seen[id(p)] = VerbInfo(name, summaries.get(name, ""), options, _words(p))
    return [VerbInfo(v.name, v.summary, v.options, v.words, tuple(names[k][1:])) for k, v in seen.items()]


def top_options(parser: argparse.ArgumentParser) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The options given before a verb: all of them, and those that take a value (whose next word
    is that value, not the verb)."""
    flags, valued = [], []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            continue
        for o in a.option_strings:
            if o.startswith("--"):
                flags.append(o)
                if a.nargs != 0:
                    valued.append(o)
    return tuple(flags), tuple(valued)


def _q(text: str) -> str:
    """``text`` for a single-quoted shell word."""
    return text.replace("'", "'\\''")


def bash(parser: argparse.ArgumentParser) -> str:
    """A bash completion script (``complete -F``)."""
    table = verb_table(parser)
    flags, valued = top_options(parser)
    verbs = " ".join(n for v in table for n in (v.name, *v.aliases))
    cases = [f"        {'|'.join((v.name, *v.aliases))}) opts='{_q(' '.join((*v.words, *v.options)))}' ;;"
             for v in table]
    return "\n".join([
        "# pinchtab bash completion: source <(pinchtab completion bash)",
        "_pinchtab() {",
        "    local cur=${COMP_WORDS[COMP_CWORD]} verb='' i opts=''",
        "    for ((i=1; i<COMP_CWORD; i++)); do",
        "        case ${COMP_WORDS[i]} in",
        f"            {'|'.join(valued)}) ((i++)) ;;  # the option's value, not the verb",
        "            -*) ;;",
        "            *) verb=${COMP_WORDS[i]}; break ;;",
        "        esac",
        "    done",
        "    if [[ -z $verb ]]; then",
        f"        COMPREPLY=($(compgen -W '{_q(' '.join((verbs, *flags)))}' -- \"$cur\"))",
        "        return",
        "    fi",
        "    case $verb in",
        *cases,
        "    esac",
        "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))",
        "}",
        "complete -o default -F _pinchtab pinchtab",
        "",
    ])


def zsh(parser: argparse.ArgumentParser) -> str:
    """A zsh completion function (``#compdef pinchtab``)."""
    table = verb_table(parser)
    flags, valued = top_options(parser)
    # _describe splits "name:summary" at the first unescaped colon.
    described = [f"    '{_q(n)}:{_q(v.summary.replace(':', chr(92) + ':'))}'"
                 for v in table for n in (v.name, *v.aliases)]
    cases = [f"    {'|'.join((v.name, *v.aliases))}) opts=({' '.join((*v.words, *v.options))}) ;;" for v in table]
    return "\n".join([
        "#compdef pinchtab",
        "# pinchtab zsh completion: pinchtab completion zsh > \"${fpath[1]}/_pinchtab\"",
        "local -a verbs opts",
        "local verb=''",
        "local -i i=2",
        "verbs=(",
        *described,
        ")",
        "while (( i < CURRENT )); do",
        "  case $words[i] in",
        f"    {'|'.join(valued)}) (( i += 2 )) ;;  # the option's value, not the verb",
        "    -*) (( i++ )) ;;",
        "    *) verb=$words[i]; break ;;",
        "  esac",
        "done",
        "if [[ -z $verb ]]; then",
        "  if [[ $PREFIX == -* ]]; then",
        f"    compadd -- {' '.join(flags)}",
        "  else",
        "    _describe 'pinchtab command' verbs",
        "  fi",
        "  return",
        "fi",
        "case $verb in",
        *cases,
        "esac",
        "compadd -- $opts",
        "",
    ])
