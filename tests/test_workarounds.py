"""The import-time work-around for the CPU thread-pool hang of jaxlib 0.11.1-0.11.2."""

import pytest

from rdpjax._internal.workarounds import CPU_POOL_FLAG, cpu_pool_hang_workaround


@pytest.mark.parametrize("version", ["0.11.1", "0.11.2"])
def test_flag_added_on_affected_jaxlib_before_backend_starts(version):
    env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    assert cpu_pool_hang_workaround(version, env, backends_started=False) == "set"
    assert env["XLA_FLAGS"] == f"--xla_force_host_platform_device_count=4 {CPU_POOL_FLAG}"
    empty = {}
    assert cpu_pool_hang_workaround(version, empty, backends_started=False) == "set"
    assert empty == {"XLA_FLAGS": CPU_POOL_FLAG}


@pytest.mark.parametrize("version", ["0.10.2", "0.11.0", "0.12.0", "0.11.20"])
def test_other_jaxlib_left_alone(version):
    env = {}
    assert cpu_pool_hang_workaround(version, env, backends_started=False) == "not needed"
    assert env == {}


def test_users_choice_kept():
    env = {"XLA_FLAGS": "--xla_cpu_multi_thread_eigen=true"}
    assert cpu_pool_hang_workaround("0.11.2", env, backends_started=False) == "already set"
    assert env == {"XLA_FLAGS": "--xla_cpu_multi_thread_eigen=true"}


def test_warns_when_backend_already_started():
    env = {}
    with pytest.warns(UserWarning, match="xla_cpu_multi_thread_eigen=false"):
        assert cpu_pool_hang_workaround("0.11.2", env, backends_started=True) == "too late"
    assert env == {}


def test_default_arguments_read_the_running_jax():
    # This environment's jaxlib: the call must agree with the version list, whatever it is.
    import jaxlib

    env = {"XLA_FLAGS": ""}
    got = cpu_pool_hang_workaround(environ=env, backends_started=False)
    affected = jaxlib.__version__ in ("0.11.1", "0.11.2")
    assert got == ("set" if affected else "not needed")
