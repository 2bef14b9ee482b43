"""Multi-document YAML with comments (PyYAML writes none): a header per document, one comment block per
RBAC rule. The output is what ``kubectl apply -f`` reads."""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml


@dataclass
class Doc:
    """One object and its comments: ``header`` above it, ``rule_comments[i]`` above ``obj["rules"][i]``."""

    obj: dict
    header: str = ""
    rule_comments: list[list[str]] = field(default_factory=list)


def _comment(text: str, indent: str = "") -> str:
    return "".join(f"{indent}# {line}".rstrip() + "\n" for line in text.splitlines())


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (PromQL, descriptions) as literal blocks, as people write them."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def _dump(obj: object, flow: bool | None = False) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=flow, width=1000, allow_unicode=True)


def render_doc(doc: Doc) -> str:
    """One document without its ``---`` separator."""
    text = _comment(doc.header) if doc.header else ""
    if not doc.rule_comments:
        return text + _dump(doc.obj)
    text += _dump({k: v for k, v in doc.obj.items() if k != "rules"})
    text += "rules:\n"
    for rule, comments in zip(doc.obj["rules"], doc.rule_comments):
        text += "".join(_comment(c, "  ") for c in comments)
        text += "  - " + _dump(rule, flow=True).strip() + "\n"
    return text


def render(docs: list[Doc], preamble: str = "") -> str:
    """Every document, ``---`` between them, ``preamble`` as a comment on top."""
    out = _comment(preamble) if preamble else ""
    return out + "".join("---\n" + render_doc(d) for d in docs)
