"""Command-line parsing in the style of the QNN tools: ``--opt value`` or ``--opt=value``."""

from __future__ import annotations

from collections.abc import Mapping


class ArgError(ValueError):
    """A bad command line; the message is what the tool prints before exiting 1."""


def parse_options(
    argv: list[str], takes_value: Mapping[str, bool], aliases: Mapping[str, str] | None = None
) -> dict[str, str | bool]:
    """Options by canonical name; a flag maps to True. Unknown options are errors."""
    aliases = aliases or {}
    options: dict[str, str | bool] = {}
    index = 0
    while index < len(argv):
        item = argv[index]
        name, has_inline, inline = item.partition("=")
        name = aliases.get(name, name)
        if name not in takes_value:
            raise ArgError(f"Invalid argument passed: {item}")
        if takes_value[name]:
            if has_inline:
                options[name] = inline
            elif index + 1 < len(argv):
                index += 1
                options[name] = argv[index]
            else:
                raise ArgError(f"Missing value for argument: {name}")
        else:
            options[name] = True
        index += 1
    return options


def text_option(options: Mapping[str, str | bool], name: str) -> str | None:
    value = options.get(name)
    return value if isinstance(value, str) else None


def int_option(options: Mapping[str, str | bool], name: str) -> int | None:
    value = text_option(options, name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise ArgError(f"Invalid value for {name}: {value} (expected a whole number)") from None
    if number < 0:
        raise ArgError(f"Invalid value for {name}: {value}")
    return number


def float_option(options: Mapping[str, str | bool], name: str) -> float | None:
    value = text_option(options, name)
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        raise ArgError(f"Invalid value for {name}: {value} (expected a number)") from None
    if number <= 0:
        raise ArgError(f"Invalid value for {name}: {value}")
    return number
