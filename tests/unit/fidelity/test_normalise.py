from gpupoc.fidelity.normalise import present, shape


def test_counts_and_node_names_are_replaced_but_the_wording_stays():
    real = ("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node "
            "affinity/selector. preemption: found a potential placement for pod on node gpu-node-0, preempting 1 victims")
    assert shape(real, ["gpu-node-0"]) == (
        "<n>/<n> nodes are available: <n> Insufficient nvidia.com/gpu, <n> node(s) didn't match Pod's node "
        "affinity/selector. preemption: found a potential placement for pod on node <node>, preempting <n> victims")


def test_a_longer_node_name_is_not_cut_by_a_shorter_one():
    assert shape("on node training-node-10 and training-node-1", ["training-node-1", "training-node-10"]) == \
        "on node <node> and <node>"


def test_uids_times_ips_and_credential_ids_become_placeholders():
    text = ("Preempted by pod 3f2a1c9e-1b2d-4e5f-8a9b-0c1d2e3f4a5b on node n at 2026-12-06T10:00:00.123Z from "
            "10.0.0.7 (JTI=abc-123)")
    assert shape(text) == "Preempted by pod <uid> on node n at <time> from <ip> (JTI=<id>)"


def test_generated_replicaset_and_pod_suffixes_become_hash():
    assert shape('ReplicaSet "fid-web-7d4b9c8f6d" has successfully progressed.') == \
        'ReplicaSet "fid-web-<hash>" has successfully progressed.'
    assert shape("Scaled up replica set fid-web-7d4b9c8f6d from 1 to 2") == \
        "Scaled up replica set fid-web-<hash> from <n> to <n>"


def test_names_with_vowels_stay_as_they_are():
    assert shape('pods "over-quota" is forbidden: exceeded quota: fid-q') == \
        'pods "over-quota" is forbidden: exceeded quota: fid-q'


def test_no_message_stays_none():
    assert shape(None) is None


def test_present_lists_the_dotted_fields_that_have_a_value():
    obj = {"code": 403, "message": "", "details": {"name": "p", "kind": None}}
    assert present(obj, ["code", "message", "reason", "details.name", "details.kind", "details.name.x"]) == \
        ["code", "message", "details.name"]
