"""The artifact hand-over: the producer's reported path and hash, verified, and written to the index."""

from __future__ import annotations

import hashlib
import json

from gpupoc.classes.audit_trail.artifacts import hand_over, index_key, parse_artifact_lines
from gpupoc.pipeline.k8s import Response

SHA = "ab" * 32


def test_parse_artifact_lines_reads_the_workload_format_with_timestamps():
    log = ("2026-03-01T12:00:00.000000001Z training finished\n"
           f"2026-03-01T12:00:01.0Z artifact: /data/volumes/team-a/artifacts/train-1/model.npz sha256={SHA} "
           "size=1234 manifest=/data/volumes/team-a/artifacts/train-1/manifest.json\n")
    [a] = parse_artifact_lines(log)
    assert (a.path, a.sha256, a.size_bytes) == ("/data/volumes/team-a/artifacts/train-1/model.npz", SHA, 1234)
    assert parse_artifact_lines("artifact: not written (GPUPOC_ARTIFACT_DIR is not set)") == []


def _artifact_cluster(fake_caller, path: str, sha: str, index: dict):
    c = fake_caller("team-a")
    c.on("GET", r".*/pods/train-1", Response(200, {"metadata": {"name": "train-1"}, "spec": {"nodeName": "n1"},
                                                    "status": {"containerStatuses": [{"state": {"terminated": {
                                                        "finishedAt": "2026-03-01T12:00:02Z"}}}]}}))
    c.on("GET", r".*/pods/train-1/log", Response(200, None, f"artifact: {path} sha256={sha} size=3\n"))

    def patch(p, q, body):
        index.update(body["data"])
        return Response(200, {"data": index})

    c.on("PATCH", r".*/configmaps/artifact-index", patch)
    c.on("GET", r".*/configmaps/artifact-index", lambda *a: Response(200, {"data": dict(index)}))
    return c


def test_hand_over_verifies_the_hash_and_writes_the_index(tmp_path, fake_caller):
    f = tmp_path / "vol" / "train-1" / "model.npz"
    f.parent.mkdir(parents=True)
    f.write_bytes(b"abc")
    sha = hashlib.sha256(b"abc").hexdigest()
    index: dict = {}
    c = _artifact_cluster(fake_caller, "/mnt/artifacts/train-1/model.npz", sha, index)
    rec = hand_over(c, "team-a", "train-1", local_root=tmp_path / "vol")
    assert rec.row.verified and rec.hash_verified and rec.index_written, rec.reason
    assert (rec.producer_node, rec.row.consumer, rec.index_key) == ("n1", "pipeline", index_key("train-1", "model.npz"))
    assert json.loads(index[rec.index_key])["sha256"] == sha


def test_hand_over_flags_a_tampered_artifact(tmp_path, fake_caller):
    f = tmp_path / "vol" / "train-1" / "model.npz"
    f.parent.mkdir(parents=True)
    f.write_bytes(b"tampered")
    c = _artifact_cluster(fake_caller, "/x/train-1/model.npz", hashlib.sha256(b"abc").hexdigest(), {})
    rec = hand_over(c, "team-a", "train-1", local_root=tmp_path / "vol")
    assert not rec.row.verified and "hash mismatch" in rec.reason


def test_hand_over_to_a_consumer_pod_uses_its_printed_hash(tmp_path, fake_caller):
    c = _artifact_cluster(fake_caller, "/x/train-1/model.npz", SHA, {})
    rec = hand_over(c, "team-a", "train-1", consumer="eval-1", consumer_log=f"read model.npz sha256={SHA}\n")
    assert rec.hash_verified and rec.row.consumer == "eval-1"


def test_hand_over_reads_a_sha256sum_line_from_a_consumer(tmp_path, fake_caller):
    c = _artifact_cluster(fake_caller, "/x/train-1/model.npz", SHA, {})
    rec = hand_over(c, "team-a", "train-1", consumer="eval-1",
                    consumer_log=f"2026-03-01T12:00:00Z {SHA}  /x/train-1/model.npz\n")
    assert rec.consumer_sha256 == SHA and rec.row.verified
