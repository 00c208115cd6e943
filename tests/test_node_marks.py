"""The replacement marks on the three clouds' node specs (elastic_gpu/node_marks.py): one way of marking, read by
one function, from which every cloud's replace and rolling rows (and so `diff` and docs/day-two.md's table) come."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from elastic_gpu.aws.node_spec import AwsNodeSpec
from elastic_gpu.azure.node_spec import AksNodeSpec
from elastic_gpu.gcp.node_spec import GkeNodeSpec
from elastic_gpu.node_marks import MARK, Mark, digest_marks, marked_inputs, marks, replaces, rolls, sets
from elastic_gpu.tools.clouds import get_cloud

SPECS = {"aws": AwsNodeSpec, "azure": AksNodeSpec, "gcp": GkeNodeSpec}


@pytest.mark.parametrize("cloud", sorted(SPECS))
def test_each_clouds_rows_hold_its_specs_marks(cloud: str) -> None:
    spec = SPECS[cloud]
    rows = get_cloud(cloud).replacement()
    [(pool_type, rule)] = rows.pool_replace_fields.items()
    replacing = marked_inputs(spec, "replaces")
    assert replacing and set(replacing) <= set(rule.fields), cloud
    rolling = marked_inputs(spec, "rolls")
    assert set(rolling) <= set(rows.node_rolling_fields[pool_type].fields), cloud
    # an input whose update keeps the nodes is neither
    assert not set(marked_inputs(spec, "sets")) & set(rule.fields)


@pytest.mark.parametrize("cloud", sorted(SPECS))
def test_every_mark_that_replaces_or_rolls_names_its_source(cloud: str) -> None:
    for name, mark in marks(SPECS[cloud]):
        assert mark.input and mark.input[0].islower(), (cloud, name)  # the provider's (camelCase) name
        if mark.effect != "sets":
            assert "." in mark.source or " " in mark.source, (cloud, name, mark.source)


def test_the_marks_are_the_fields_metadata_and_nothing_else() -> None:
    @dataclass(frozen=True)
    class Spec:
        a: int = field(default=0, metadata=replaces("a", source="p.go"))
        b: str | None = field(default=None, metadata=replaces("x.b", source="p.go", digest="when_set"))
        c: int = field(default=0, metadata=replaces("c", source="p.go", digest="never", refused_in_place=True))
        d: int = field(default=0, metadata=rolls("d", source="p.go"))
        e: int = field(default=0, metadata=sets("e"))
        f: int = field(default=0, metadata={"other": 1})
        g: int = 0

    assert [n for n, _ in marks(Spec)] == ["a", "b", "c", "d", "e"]
    assert marked_inputs(Spec, "replaces") == ("a", "x.b", "c")
    assert marked_inputs(Spec, "replaces", refused_in_place=True) == ("c",)
    assert marked_inputs(Spec, "rolls") == ("d",)
    # the digest: always, when set (not None, not empty), never
    assert [(m.input, v) for m, v in digest_marks(Spec())] == [("a", 0)]
    assert [(m.input, v) for m, v in digest_marks(Spec(b="y", c=3))] == [("a", 0), ("x.b", "y")]
    assert [m.input for m, _ in digest_marks(Spec(b=""))] == ["a"]
    assert Spec.__dataclass_fields__["a"].metadata[MARK] == Mark("a", "replaces", "p.go")
