"""A custom tool's input grammar (Lark or regex) as a llama.cpp GBNF grammar, so the embedded model
can only write inputs that parse (Codex's ``apply_patch`` patches, for one).

Lark's own grammar loader reads the definition (its ``+``/``*``/``?`` come out as plain rules);
regular expressions become GBNF through llama.cpp's converter, the one JSON-schema ``pattern``\\s
use. What GBNF cannot say (``%ignore``, regex flags, indirect left recursion) is a
:class:`GrammarUnsupported` naming the construct.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

__all__ = ["GrammarUnsupported", "lark_to_gbnf", "regex_to_gbnf"]


class GrammarUnsupported(ValueError):
    """The grammar uses something llama.cpp's grammar engine cannot enforce."""


def _converter() -> Any:
    from llama_cpp.llama_grammar import SchemaConverter

    return SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=True)  # type: ignore[no-untyped-call]


_SHORTHANDS = {"d": "0-9", "w": "A-Za-z0-9_", "s": " \\t\\n\\r\\f\\v"}


def _expand_shorthands(regex: str) -> str:
    """``\\d``, ``\\w``, ``\\s`` (and ``\\D``... outside brackets) as explicit classes, which
    llama.cpp's converter would otherwise take for the letters d, w, s."""
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(regex):
        char = regex[index]
        if char == "\\" and index + 1 < len(regex):
            escaped = regex[index + 1]
            chars = _SHORTHANDS.get(escaped.lower())
            if chars is None and not escaped.isalnum():
                # A backslash before a symbol (a dot, a star, a bracket): GBNF strings take no such
                # escapes, so the symbol goes in a class of its own, escaped only where classes need it.
                plain = f"\\{escaped}" if escaped in "]\\^-" else escaped
                out.append(plain if in_class else f"[{plain}]")
            elif chars is None:
                out.append(regex[index : index + 2])
            elif in_class:
                if escaped.isupper():
                    raise GrammarUnsupported(f"'\\{escaped}' inside a character class cannot be enforced.")
                out.append(chars)
            else:
                out.append(f"[{'^' if escaped.isupper() else ''}{chars}]")
            index += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class and out and out[-1] != "[":
            in_class = False
        out.append(char)
        index += 1
    return "".join(out)


def _pattern(converter: Any, name: str, regex: str) -> None:
    try:
        converter._visit_pattern(
            f"^{_expand_shorthands(regex)}$", name
        )  # the converter JSON-schema patterns go through
    except Exception as exc:  # it raises bare errors (ValueError, AssertionError...) on what it cannot read
        raise GrammarUnsupported(f"The regular expression {regex!r} cannot be enforced: {exc}") from exc


def regex_to_gbnf(regex: str) -> str:
    """A grammar whose sentences are exactly the strings ``regex`` matches in full."""
    converter = _converter()
    _pattern(converter, "root", regex)
    return str(converter.format_grammar())


def _rule_name(symbol: str, terminal: bool) -> str:
    return ("t-" if terminal else "r-") + symbol.lower().replace("_", "-")


def lark_to_gbnf(definition: str, start: str = "start") -> str:
    """The Lark grammar ``definition`` (from rule ``start``) in GBNF."""
    from lark.exceptions import LarkError
    from lark.load_grammar import load_grammar

    try:
        grammar, _ = load_grammar(definition, "<custom tool grammar>", None, False)  # type: ignore[no-untyped-call]
        terminals, rules, ignored = grammar.compile([start], "*")
    except LarkError as exc:
        raise GrammarUnsupported(f"The Lark grammar is not valid: {exc}") from exc
    if ignored:
        raise GrammarUnsupported("'%ignore' cannot be enforced while generating (list the separators in the rules).")
    converter = _converter()
    for terminal in terminals:
        name = _rule_name(terminal.name, True)
        if terminal.pattern.flags:
            raise GrammarUnsupported(f"Terminal {terminal.name} uses regex flags {sorted(terminal.pattern.flags)}.")
        if terminal.pattern.type == "str":
            converter._add_rule(name, json.dumps(terminal.pattern.value, ensure_ascii=False))
        else:
            _pattern(converter, name, terminal.pattern.value)
    alternatives: dict[str, list[list[str]]] = {}
    for rule in rules:
        body = [_rule_name(symbol.name, symbol.is_term) for symbol in rule.expansion]
        alternatives.setdefault(_rule_name(rule.origin.name, False), []).append(body)
    for name, options in alternatives.items():
        converter._add_rule(name, _without_left_recursion(name, options))
    converter._add_rule("root", _rule_name(start, False))
    return str(converter.format_grammar())


def _sequence(symbols: Sequence[str]) -> str:
    return " ".join(symbols) if symbols else '""'


def _without_left_recursion(name: str, options: list[list[str]]) -> str:
    """``R -> R a | b`` (how Lark writes ``+`` and ``*``) as ``R ::= (b) (a)*``: llama.cpp's grammar
    engine cannot follow a rule that starts with itself."""
    recursive = [option[1:] for option in options if option[:1] == [name]]
    rest = [option for option in options if option[:1] != [name]]
    if not recursive:
        return " | ".join(_sequence(option) for option in options)
    if not rest:
        raise GrammarUnsupported(f"Rule {name} only refers to itself.")
    base = " | ".join(_sequence(option) for option in rest)
    tail = " | ".join(_sequence(option) for option in recursive)
    return f"({base}) ({tail})*"
