"""YAML with line numbers, refused before it can cost much.

The safe loader only (no tags, no code), extended to remember the line of every
mapping, key and list item so that errors can name them. A profile is a page of
YAML, so the file size is capped before parsing, and the value tree is measured
with anchors and aliases expanded before anything walks it: a "billion laughs"
file is refused in milliseconds, as are aliases that refer to themselves.
Duplicate keys are kept aside for the validator to report (YAML would let the
last one win unseen); keys brought in by a ``<<`` merge may be overridden, as
YAML intends.
"""

from __future__ import annotations

from typing import Any

import yaml

from qtop.profiles.issues import ERROR, Issue, ProfileError

MAX_PROFILE_BYTES = 256 * 1024
# Values after aliases are expanded; a large sweep is a few thousand.
MAX_VALUES = 20_000
MAX_DEPTH = 40
_MERGE_TAG = "tag:yaml.org,2002:merge"
_LONGEST_NUMBER = 100


class LineDict(dict[str, Any]):
    """A mapping that remembers its line, its keys' lines and the keys given twice."""

    line: int = 0
    key_lines: dict[str, int]
    duplicates: list[tuple[str, int, int]]  # key, line, line of its first occurrence


class LineList(list[Any]):
    """A list that remembers its line and the line of each item."""

    line: int = 0
    item_lines: list[int]


def line_dict(line: int, **items: Any) -> LineDict:
    mapping = LineDict(items)
    mapping.line = line
    mapping.key_lines = dict.fromkeys(items, line)
    mapping.duplicates = []
    return mapping


class _LineLoader(yaml.SafeLoader):
    def __init__(self, text: str, source: str) -> None:
        super().__init__(text)
        self.source = source
        self.depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        # Stop at the depth limit while composing: PyYAML's scanner slows down
        # quadratically with flow nesting, so waiting for the whole tree would take seconds.
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                line = self.peek_event().start_mark.line + 1
                raise refuse(
                    self.source,
                    line,
                    f"the YAML is nested more than {MAX_DEPTH} levels deep",
                    "a profile is at most a few levels deep: check the indentation",
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    first_lines: dict[str, int] = {}
    duplicates: list[tuple[str, int, int]] = []
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
            continue
        line = key_node.start_mark.line + 1
        name = str(loader.construct_object(key_node))
        if name in first_lines:
            duplicates.append((name, line, first_lines[name]))
        else:
            first_lines[name] = line
    loader.flatten_mapping(node)
    mapping = LineDict()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    mapping.duplicates = duplicates
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise yaml.constructor.ConstructorError(
                None, None, "mapping keys must be plain scalars", key_node.start_mark
            )
        name = str(key)
        mapping[name] = loader.construct_object(value_node, deep=True)
        mapping.key_lines.setdefault(name, key_node.start_mark.line + 1)
    return mapping


def _construct_int(loader: _LineLoader, node: yaml.ScalarNode) -> int:
    # int() refuses more than 4300 digits with a message about sys internals.
    if len(node.value) > _LONGEST_NUMBER:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"a number of {len(node.value)} characters is longer than any value here",
            node.start_mark,
        )
    return loader.construct_yaml_int(node)


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> LineList:
    items = LineList(loader.construct_object(child, deep=True) for child in node.value)
    items.line = node.start_mark.line + 1
    items.item_lines = [child.start_mark.line + 1 for child in node.value]
    return items


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)
_LineLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def refuse(source: str, line: int | None, message: str, fix: str | None = None) -> ProfileError:
    """A file-level problem (unreadable, not YAML, too big) as a one-issue error."""
    return ProfileError.from_issues([Issue(ERROR, source, line, "", message, fix)])


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_size(root: yaml.Node, source: str) -> None:
    """Count the values the tree holds once aliases are expanded; refuse cycles and excess.

    Each node is sized once (aliases share their node), so this costs the size of
    the file, not of the expansion.
    """
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        ident = id(node)
        if children_done:
            on_path.discard(ident)
            children = _children(node)
            size = 1 + sum(sizes[id(child)] for child in children)
            depth = 1 + max((depths[id(child)] for child in children), default=0)
            sizes[ident], depths[ident] = size, depth
            line = node.start_mark.line + 1
            if size > MAX_VALUES:
                raise refuse(
                    source,
                    line,
                    f"the YAML holds more than {MAX_VALUES} values once its aliases (*name) "
                    "are expanded",
                    "a profile needs a few hundred values: write them out instead of "
                    "repeating anchors inside anchors",
                )
            if depth > MAX_DEPTH:
                raise refuse(
                    source,
                    line,
                    f"the YAML is nested more than {MAX_DEPTH} levels deep",
                    "a profile is at most a few levels deep: check the indentation",
                )
            continue
        if ident in sizes:
            continue
        if ident in on_path:
            raise refuse(
                source,
                node.start_mark.line + 1,
                "an alias refers to the value that contains it, which would never end",
                "write the value out instead of the alias",
            )
        on_path.add(ident)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _yaml_error(exc: yaml.MarkedYAMLError, source: str) -> ProfileError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else 0
    problem = exc.problem or exc.context or "invalid YAML"
    context = exc.context_mark
    if exc.context and context is not None and context.line + 1 != line:
        problem += f" ({exc.context} on line {context.line + 1})"
    if isinstance(exc, yaml.constructor.ConstructorError):
        return refuse(source, line, f"a value cannot be read: {problem}", "check that value")
    return refuse(
        source,
        line,
        f"not valid YAML: {problem}",
        "check the indentation and quoting on that line (YAML needs spaces, not tabs)",
    )


def parse_yaml(text: str, source: str) -> Any:
    """The YAML document in ``text`` with lines remembered, or a ``ProfileError``."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_PROFILE_BYTES:
        raise refuse(
            source,
            None,
            f"{size // 1024} KiB is more than a profile can be ({MAX_PROFILE_BYTES // 1024} KiB)",
            "a profile is a page of YAML: check that this is the right file",
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    loader = _LineLoader(text, source)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check_size(root, source)
        return loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        raise _yaml_error(exc, source) from None
    except yaml.YAMLError as exc:
        raise refuse(source, None, f"not valid YAML: {exc}") from None
    except RecursionError:
        raise refuse(
            source,
            None,
            "the YAML is nested too deeply to read",
            "a profile is at most a few levels deep: check the brackets and indentation",
        ) from None
    finally:
        loader.dispose()
