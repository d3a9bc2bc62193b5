"""The Kubernetes recipe (deploy/kubernetes), checked offline: every manifest parses, the server's
config loads as Pinchtab loads it, and the pieces agree (ports, probes, secrets, names)."""
from __future__ import annotations

import json
from pathlib import Path

import yaml
from support import ROOT

from app.config import load_config

KUBE = ROOT / "deploy" / "kubernetes"


def manifests() -> list[dict]:
    docs = []
    for path in sorted(KUBE.glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def of_kind(kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in manifests() if d["kind"] == kind}


def test_every_manifest_is_a_known_kind_with_a_name() -> None:
    known = {"ConfigMap", "Deployment", "Service", "PersistentVolumeClaim", "Ingress"}
    for doc in manifests():
        assert doc["kind"] in known and doc["apiVersion"] and doc["metadata"]["name"]


def test_the_servers_config_loads_and_names_engines_that_exist(tmp_path: Path) -> None:
    raw = of_kind("ConfigMap")["pinchtab-config"]["data"]["config.json"]
    path = tmp_path / "config.json"
    path.write_text(raw)
    config = load_config(env={"HOME": str(tmp_path), "PINCHTAB_CONFIG": str(path)})
    services = of_kind("Service")
    for provider in config.browsers.providers:
        host = provider.url.split("//", 1)[1].split(":", 1)[0]
        assert host in services, f"provider {provider.name} names service {host}, which is not in the recipe"
        assert "${BROWSERLESS_TOKEN}" in provider.url   # the token stays in the secret
    ingress = of_kind("Ingress")["pinchtab"]
    assert {r["host"] for r in ingress["spec"]["rules"]} <= set(json.loads(raw)["server"]["allowedHosts"])


def test_the_server_runs_as_non_root_with_its_secrets_from_a_secret_and_probes_on_health() -> None:
    deploy = of_kind("Deployment")["pinchtab"]
    pod = deploy["spec"]["template"]["spec"]
    assert deploy["spec"]["replicas"] == 1 and pod["securityContext"]["runAsNonRoot"] is True
    container = pod["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    for secret in ("PINCHTAB_TOKEN", "BROWSERLESS_TOKEN"):
        assert "valueFrom" in env[secret] and "value" not in env[secret]
    assert env["PINCHTAB_BIND"]["value"] == "0.0.0.0"   # the entrypoint refuses this without a token
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert env["PINCHTAB_CONFIG"]["value"].rsplit("/", 1)[0] in mounts
    service = of_kind("Service")["pinchtab"]
    assert service["spec"]["selector"] == deploy["spec"]["selector"]["matchLabels"]
    assert container["ports"][0]["containerPort"] == 9867


def test_each_engine_queues_nothing_so_a_full_one_is_skipped_at_once() -> None:
    for name, deploy in of_kind("Deployment").items():
        if not name.startswith("browserless"):
            continue
        env = {e["name"]: e for e in deploy["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert env["QUEUED"]["value"] == "0" and "valueFrom" in env["TOKEN"]
        assert name in of_kind("Service")
