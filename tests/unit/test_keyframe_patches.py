"""Keyframe patches applied by copying (``patch``) and in place (``patch_owned``) agree."""

import copy
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qtop.record.keyframes import KeyframeError, diff, encode_json, patch, patch_owned

keys = st.sampled_from(["a", "b", "c", "t", "mean", "logs"])
scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-2, 2) | st.text(max_size=3)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=25,
)


@given(values, values)
def test_owned_patching_turns_the_old_state_into_the_new_one(old, new):
    owned = patch_owned(copy.deepcopy(old), diff(old, new))
    assert encode_json(owned) == encode_json(new) == encode_json(patch(old, diff(old, new)))


@given(st.lists(st.dictionaries(keys, st.lists(scalars, max_size=4), max_size=4), min_size=2,
                max_size=6))  # fmt: skip
def test_a_chain_of_owned_patches_ends_where_the_copying_chain_does(states):
    nodes = [diff(a, b) for a, b in itertools.pairwise(states)]
    copied, owned = states[0], copy.deepcopy(states[0])
    for node in nodes:
        copied, owned = patch(copied, node), patch_owned(owned, node)
    assert encode_json(owned) == encode_json(copied) == encode_json(states[-1])


def test_a_list_patch_extends_the_list_it_owns_without_copying_it():
    series = {"t": [1, 2, 3], "mean": [4, 5, 6]}
    owned = patch_owned(series, {"d": {"t": {"l": [3, [4]]}, "mean": {"l": [2, [7, 8]]}}})
    assert owned is series and owned == {"t": [1, 2, 3, 4], "mean": [4, 5, 7, 8]}


def test_a_key_both_removed_and_changed_is_patched_from_its_value_before():
    node = {"d": {"a": {"l": [1, [9]]}}, "x": ["a", "b"]}
    old = {"a": [1, 2], "b": 3, "c": 4}
    assert patch_owned(copy.deepcopy(old), node) == patch(old, node) == {"a": [1, 9], "c": 4}


@pytest.mark.parametrize(
    ("old", "node"),
    [
        ([1, 2], {"l": [3, []]}),
        ([1, 2], {"l": [1]}),
        ({"a": 1}, {"l": [0, []]}),
        ([1], {"d": {}}),
        ({"a": 1}, {"d": {"b": {"l": [0, []]}}}),
        ({"a": 1}, {"d": {}, "o": ["b"]}),
        ({"a": 1}, {"q": 1}),
        ({"a": 1}, [1]),
    ],
)
def test_a_patch_that_does_not_fit_is_refused_alike(old, node):
    with pytest.raises(KeyframeError) as copying:
        patch(copy.deepcopy(old), node)
    with pytest.raises(KeyframeError) as owning:
        patch_owned(copy.deepcopy(old), node)
    assert str(owning.value) == str(copying.value)
