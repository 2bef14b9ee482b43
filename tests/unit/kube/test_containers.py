"""A container's process as a kubelet works it out: argv over the image's ENTRYPOINT, env, exit codes, port."""

from __future__ import annotations

import base64
import sys

import pytest

from gpupoc.kube.containers import (
    ConfigMissing, StartFailed, build_argv, container_env, exit_code_of, process_env, serving_port,
)


class Store:
    def __init__(self, objects: dict) -> None:
        self.objects = objects

    def get(self, resource: str, namespace: str, name: str):
        return self.objects.get((resource, namespace, name))


POD = {"metadata": {"name": "p", "namespace": "ns", "uid": "u", "labels": {"app": "a"}},
       "spec": {"nodeName": "n"}, "status": {}}


def test_command_replaces_the_entrypoint_and_args_follow():
    assert build_argv({"args": ["--mode", "train"]}, ["{python}", "-m", "w"]) == [sys.executable, "-m", "w",
                                                                                   "--mode", "train"]
    assert build_argv({"command": ["sh", "-c"], "args": ["true"]}, ["ignored"]) == ["sh", "-c", "true"]


def test_no_command_at_all_fails_to_start():
    with pytest.raises(StartFailed, match="no command specified"):
        build_argv({}, [])


def test_env_resolves_the_downward_api_and_secret_refs():
    store = Store({("secrets", "ns", "s"): {"data": {"k": base64.b64encode(b"v").decode()}}})
    env = container_env(store, POD, {"env": [
        {"name": "A", "value": "1"}, {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
        {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]})
    assert env == {"A": "1", "NODE": "n", "APP": "a", "S": "v"}


def test_a_missing_secret_is_a_config_error_unless_optional():
    ref = {"name": "S", "valueFrom": {"secretKeyRef": {"name": "gone", "key": "k"}}}
    with pytest.raises(ConfigMissing, match='secret "gone" not found'):
        container_env(Store({}), POD, {"env": [ref]})
    ref["valueFrom"]["secretKeyRef"]["optional"] = True
    assert container_env(Store({}), POD, {"env": [ref]}) == {}


def test_the_process_env_is_clean_with_the_platforms_values_last():
    env = process_env({"X": "pod"}, {"X": "platform"})
    assert env["X"] == "platform" and env["PYTHONUNBUFFERED"] == "1"


def test_a_signal_is_reported_as_128_plus_its_number():
    assert (exit_code_of(-9), exit_code_of(3)) == (137, 3)


def test_the_serving_port_comes_from_the_args_or_the_env():
    assert serving_port({"args": ["serve", "--port", "9000"]}, {}) == 9000
    assert serving_port({"args": ["serve"]}, {}) == 8080
    assert serving_port({}, {"WORKLOAD_MODE": "serve", "WORKLOAD_PORT": "7000"}) == 7000
    assert serving_port({"args": ["--mode", "train"]}, {}) is None
