"""Old import paths that still work for one release, each with a warning naming the new one."""

import importlib

import pytest

import castle_envs.vector as old


@pytest.mark.parametrize("name", sorted(old.MOVED))
def test_an_old_vector_name_warns_and_is_the_new_object(name):
    with pytest.warns(DeprecationWarning, match=f"castle_envs.vector.{name} moved to"):
        value = getattr(old, name)
    assert value is getattr(importlib.import_module(old.MOVED[name]), name)


def test_a_name_the_old_package_never_had_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'siege_solver'"):
        old.siege_solver  # noqa: B018 (the attribute read is the test)
