"""The one front door for every file the tools read: stack files, `Pulumi.yaml`, policy configs.

Whatever is wrong with a file (missing, a directory, not UTF-8, a NUL byte, a YAML syntax error
such as a tab in the indentation, a duplicated or non-string key, a document of the wrong shape)
becomes one ConfigError that names the file and, where there is one, the line and column.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from elastic_gpu.errors import ConfigError


class _Strict(yaml.constructor.SafeConstructor):
    """Safe construction that rejects duplicated and non-string mapping keys (the last copy would win silently;
    the Pulumi CLI rejects duplicate config keys)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, yaml.MappingNode):
            return super().construct_mapping(node, deep=deep)
        self.flatten_mapping(node)  # merge keys (`<<: *anchor`) first, so duplicates are seen
        seen: dict[str, yaml.Mark] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f'key {key!r} is a {type(key).__name__}, not a string; quote it ("{key_node.value}")',
                    key_node.start_mark,
                )
            if key in seen:
                first = seen[key]
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first at line {first.line + 1}); a key may appear once",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            # An explicit tag that does not fit its value (`!!int project`): PyYAML raises a bare error.
            if isinstance(exc, yaml.YAMLError):
                raise
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {getattr(node, 'value', '?')!r} as {node.tag} ({exc})", node.start_mark
            ) from None


class _StrictLoader(_Strict, yaml.SafeLoader):
    """PyYAML's own parser, with the strict construction."""


#: PyYAML's safe loader over libyaml where PyYAML was built with it (its wheels are), else over its own parser:
#: for YAML this library wrote itself (the autoscaler's priority ConfigMap).
SAFE_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = (
    yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
)

if yaml.__with_libyaml__:

    class _FastStrictLoader(_Strict, yaml.CSafeLoader):
        """libyaml's parser, with the strict construction: PyYAML's own parser takes a tenth of a second for a
        stack of 200 pools. Only a document it reads is taken from it: its errors are worded unlike PyYAML's, so
        a document it refuses is read again by `_StrictLoader`, whose message the user sees."""


def _load(text: str) -> Any:
    if yaml.__with_libyaml__:
        try:
            return yaml.load(text, Loader=_FastStrictLoader)
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=_StrictLoader)


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def read_text(path: Path | str, *, what: str) -> str:
    """A file's text, as UTF-8 (a BOM is allowed); every failure a ConfigError naming the file."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError([f"{path}: is a directory; expected the {what} file"], source=what)
    if not path.exists():
        raise ConfigError([f"{path}: not found; expected the {what} file"], source=what)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError([f"{path}: cannot be read ({exc.strerror})"], source=what) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = _line_col(data[: exc.start].decode("utf-8", "replace"), exc.start)
        raise ConfigError(
            [f"{path}:{line}:{col}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8"],
            source=what,
        ) from None
    if (nul := text.find("\0")) >= 0:
        line, col = _line_col(text, nul)
        raise ConfigError([f"{path}:{line}:{col}: a NUL character; the file must be plain text"], source=what)
    return text


def read_yaml(path: Path | str, *, what: str) -> Any:
    """One YAML (or JSON) document from `path`, with duplicate and non-string keys rejected."""
    text = read_text(path, what=what)
    try:
        return _load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = exc.problem or "invalid YAML"
        if "'\\t'" in problem:
            problem += " (a tab; YAML indents with spaces only)"
        context = f" ({exc.context})" if exc.context and exc.context not in problem else ""
        raise ConfigError([f"{where}: {problem}{context}"], source=what) from None
    except yaml.YAMLError as exc:
        raise ConfigError([f"{path}: invalid YAML ({exc})"], source=what) from None


def read_mapping(path: Path | str, *, what: str, empty_ok: bool = False) -> dict[str, Any]:
    """A YAML file whose document must be a mapping (an empty file is `{}` when `empty_ok`)."""
    data = read_yaml(path, what=what)
    if data is None and empty_ok:
        return {}
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {_kind(data)}"
        raise ConfigError([f"{path}: the {what} must be a mapping of keys to values (got {got})"], source=what)
    return data


def _kind(value: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", int: "number", float: "number"}.get(
        type(value), type(value).__name__
    )


def read_stack_file(path: Path | str) -> dict[str, Any]:
    """A `Pulumi.<stack>.yaml`: its `config:` map (`namespace:key` -> value); empty when there is none."""
    data = read_mapping(path, what="stack file", empty_ok=True)
    config = data.get("config")
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise ConfigError(
            [f"{path}: `config:` must be a mapping of `namespace:key` to value (got a {_kind(config)})"],
            source="stack file",
        )
    return config


def read_project_file(path: Path | str) -> dict[str, Any]:
    """A `Pulumi.yaml`: needs a non-empty `name`; `stackConfigDir`, when set, a relative directory."""
    data = read_mapping(path, what="project file (Pulumi.yaml)")
    problems = []
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append(f"{path}: `name:` must be the project's name, a non-empty string (got {name!r})")
    config_dir = data.get("stackConfigDir", ".")
    if not isinstance(config_dir, str) or not config_dir.strip():
        problems.append(f"{path}: `stackConfigDir:` must be a directory path (got {config_dir!r})")
    if problems:
        raise ConfigError(problems, source="project file (Pulumi.yaml)")
    return data


def json_text(document: Mapping[str, Any]) -> str:
    """The text of a generated JSON file (the shipped schemas): key order as generated, two-space indent,
    non-ASCII kept, a final newline, so a regenerated file differs only where its content does."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
