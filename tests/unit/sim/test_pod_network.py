"""Each simulated cluster on a host takes a loopback network of its own (``sim/pod_network.py``)."""

from __future__ import annotations

import subprocess
import sys

from gpupoc.sim.pod_network import Network, claim_network, host_address


def test_two_clusters_get_disjoint_pod_and_service_ranges_and_a_released_slot_is_reused(tmp_path):
    a, release_a = claim_network(tmp_path)
    b, release_b = claim_network(tmp_path)
    a_pods = {host_address(a.pod_ip(n, 1)).split(".")[1] for n in range(1, 1001)}
    b_pods = {host_address(b.pod_ip(n, 1)).split(".")[1] for n in range(1, 1001)}
    octets = [a_pods, b_pods, {str(a.service_octet)}, {str(b.service_octet)}]
    assert all(not (x & y) for i, x in enumerate(octets) for y in octets[i + 1:]), octets
    assert a.service_cidr.is_loopback and str(a.service_cidr).startswith(f"127.{a.service_octet}.")
    release_a()
    again, release_again = claim_network(tmp_path)
    assert again == a
    release_b()
    release_again()


def test_the_slot_of_a_cluster_that_died_without_giving_it_back_is_taken_over(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    (tmp_path / "slot-00").write_text(dead)
    first, release = claim_network(tmp_path)
    assert first.pod_octet == 8, first
    release()


def test_a_state_that_claimed_nothing_keeps_the_documented_ranges():
    n = Network()
    assert n.pod_ip(1, 1) == "10.244.1.2" and str(n.service_cidr) == "127.96.0.0/16"
