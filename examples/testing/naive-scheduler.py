#!/usr/bin/env python3
"""A deliberately naive scheduler, for examples/testing/README.md.

    naive-scheduler.py SCENARIO.json > decisions.json

Reads a scenario as JSON (what `gangpack gen -o json` or `kubectl get -o json` prints:
a List, or objects one after another) and writes its decisions as a JSON List of whole
objects: each pod it binds, with spec.nodeName set, and each claim it allocates, with
status.allocation and status.reservedFor (a claim it creates from a pod's
resourceClaimTemplateName too, as the resourceclaim controller would, named in the
pod's status.resourceClaimStatuses). `gangpack check --decisions` judges them.

It schedules one unit at a time (a PodGroup's pending pods, or a pod without one), in
input order, each pod on the first node that fits, all of a unit's pods or none. It
respects node resources, cordons, node taints, nodeSelectors, and device classes and
selectors (a small subset of CEL), and it leaves pending what it does not understand
(node affinity, firstAvailable, All, adminAccess, capacity requests, claim constraints,
shared, partitioned or tainted devices, PodGroup claims, ...). That is valid.

It has two bugs, the two of the README's section 1:
  1. it never remembers which devices are taken: not those it gave to earlier claims
     in this run, nor those already allocated in the input;
  2. it ignores the PodGroup's topology constraint (schedulingConstraints.topology):
     a gang may land in several racks.

Python 3 standard library only; gangpack is not used.
"""

import copy
import json
import re
import sys

# ---------------------------------------------------------------------------------
# Reading


def read_objects(text):
    """Every object of the text: Lists flattened, JSON documents one after another."""
    decoder = json.JSONDecoder()
    objects, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return objects
        doc, i = decoder.raw_decode(text, i)
        docs = doc if isinstance(doc, list) else [doc]
        for d in docs:
            if not isinstance(d, dict):
                continue
            if str(d.get("kind", "")).endswith("List") and isinstance(d.get("items"), list):
                objects.extend(o for o in d["items"] if isinstance(o, dict))
            else:
                objects.append(d)


def get(obj, *path, default=None):
    """obj[path[0]][path[1]]..., or default where a step is missing or of another type."""
    for step in path:
        if isinstance(obj, dict) and isinstance(step, str):
            obj = obj.get(step)
        elif isinstance(obj, list) and isinstance(step, int) and -len(obj) <= step < len(obj):
            obj = obj[step]
        else:
            return default
        if obj is None:
            return default
    return obj


def items(obj, *path):
    """A list field, [] when missing or not a list."""
    v = get(obj, *path, default=[])
    return v if isinstance(v, list) else []


def name_of(obj):
    return get(obj, "metadata", "name", default="")


def namespace_of(obj):
    return get(obj, "metadata", "namespace", default="default")


# ---------------------------------------------------------------------------------
# Quantities

SUFFIXES = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": 10**-9, "u": 10**-6, "m": 10**-3, "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}
QUANTITY = re.compile(r"^([+-]?[0-9.]+)(?:[eE]([+-]?[0-9]+))?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


class Unsupported(Exception):
    """Something this scheduler does not understand: the unit stays pending."""


def quantity(v):
    """A Kubernetes quantity ("64Gi", "500m", 8) as a number."""
    if isinstance(v, bool):
        raise Unsupported("quantity")
    if isinstance(v, (int, float)):
        return v
    m = QUANTITY.match(str(v).strip())
    if not m:
        raise Unsupported("quantity %r" % v)
    n = float(m.group(1)) * (10 ** int(m.group(2) or 0))
    return n * SUFFIXES[m.group(3) or ""]


# ---------------------------------------------------------------------------------
# CEL: only `a && b && ...` of `device.driver == "X"` and
# `device.attributes["DOMAIN"].NAME == VALUE` (a string, an int or a bool).

CLAUSE_DRIVER = re.compile(r'^device\.driver\s*==\s*"([^"]*)"$')
CLAUSE_ATTR = re.compile(
    r'^device\.attributes\["([^"]+)"\]\.([A-Za-z_][A-Za-z0-9_]*)\s*==\s*("([^"]*)"|-?[0-9]+|true|false)$'
)


def compile_cel(expression):
    """A predicate over (driver, device), or Unsupported."""
    tests = []
    for clause in str(expression).split("&&"):
        clause = clause.strip()
        m = CLAUSE_DRIVER.match(clause)
        if m:
            tests.append(lambda driver, device, want=m.group(1): driver == want)
            continue
        m = CLAUSE_ATTR.match(clause)
        if m:
            domain, attr, literal = m.group(1), m.group(2), m.group(3)
            want = m.group(4) if m.group(4) is not None else json.loads(literal)
            tests.append(
                lambda driver, device, d=domain, a=attr, w=want: attribute(driver, device, d, a) == w
            )
            continue
        raise Unsupported("CEL %r" % clause)
    return lambda driver, device: all(t(driver, device) for t in tests)


def attribute(driver, device, domain, name):
    """A device attribute's value (None when missing: the selector does not match)."""
    attrs = get(device, "attributes", default={})
    value = attrs.get(domain + "/" + name) if isinstance(attrs, dict) else None
    if value is None and domain == driver and isinstance(attrs, dict):
        value = attrs.get(name)
    if not isinstance(value, dict):
        return None
    for kind in ("string", "int", "bool", "version"):
        if kind in value:
            return value[kind]
    return None


def selectors(selector_list):
    """The predicates of a list of `{cel: {expression}}` selectors."""
    out = []
    for s in selector_list:
        expression = get(s, "cel", "expression")
        if expression is None:
            raise Unsupported("selector")
        out.append(compile_cel(expression))
    return out


# ---------------------------------------------------------------------------------
# The cluster


class Cluster:
    def __init__(self, objects):
        self.objects = objects
        by_kind = {}
        for o in objects:
            by_kind.setdefault(o.get("kind"), []).append(o)
        self.nodes = [n for n in by_kind.get("Node", []) if name_of(n)]
        self.classes = {name_of(c): c for c in by_kind.get("DeviceClass", [])}
        self.claims = {(namespace_of(c), name_of(c)): c for c in by_kind.get("ResourceClaim", [])}
        self.templates = {
            (namespace_of(t), name_of(t)): t for t in by_kind.get("ResourceClaimTemplate", [])
        }
        self.groups = {(namespace_of(g), name_of(g)): g for g in by_kind.get("PodGroup", [])}
        self.pods = by_kind.get("Pod", [])
        self.rules = by_kind.get("DeviceTaintRule", [])
        self.devices = self.node_devices(by_kind.get("ResourceSlice", []))
        # What running pods use of each node (cpu, memory, pods, ...).
        self.used = {name_of(n): {} for n in self.nodes}
        for p in self.pods:
            node = get(p, "spec", "nodeName")
            if node in self.used and not terminal(p):
                add(self.used[node], pod_requests(p, strict=False))

    def node_devices(self, slices):
        """node -> [(driver, pool, device)] of the devices this scheduler may use: in a
        complete pool, on one node, without taints, counters, sharing or binding."""
        pools = {}
        for s in slices:
            key = (get(s, "spec", "driver"), get(s, "spec", "pool", "name"))
            pools.setdefault(key, []).append(s)
        out = {}
        for (driver, pool), members in pools.items():
            generation = max(get(s, "spec", "pool", "generation", default=0) for s in members)
            current = [s for s in members if get(s, "spec", "pool", "generation", default=0) == generation]
            counts = {get(s, "spec", "pool", "resourceSliceCount", default=0) for s in current}
            if driver is None or pool is None or counts != {len(current)}:
                continue
            for s in current:
                node = get(s, "spec", "nodeName")
                if not isinstance(node, str) or get(s, "spec", "sharedCounters"):
                    continue
                for d in items(s, "spec", "devices"):
                    if self.usable(driver, pool, d):
                        out.setdefault(node, []).append((driver, pool, d))
        return out

    def usable(self, driver, pool, device):
        if not isinstance(device, dict) or not isinstance(device.get("name"), str):
            return False
        for field in ("taints", "consumesCounters", "allowMultipleAllocations", "bindsToNode",
                      "bindingConditions", "bindingFailureConditions", "nodeName", "nodeSelector",
                      "allNodes"):
            if device.get(field):
                return False
        for rule in self.rules:
            sel = get(rule, "spec", "deviceSelector", default={})
            if not isinstance(sel, dict):
                continue
            if all(sel.get(k) in (None, v) for k, v in
                   (("driver", driver), ("pool", pool), ("device", device["name"]))):
                return False
        return True


def terminal(pod):
    return get(pod, "status", "phase") in ("Succeeded", "Failed")


def add(total, more):
    for k, v in more.items():
        total[k] = total.get(k, 0) + v


def pod_requests(pod, strict=True):
    """What a pod asks of its node: the sum of its containers' requests (a limit
    without a request counts as the request), and one `pods`."""
    spec = get(pod, "spec", default={})
    if strict and any(spec.get(f) for f in ("initContainers", "overhead", "resources")):
        raise Unsupported("init containers, overhead or pod-level resources")
    total = {"pods": 1}
    for c in items(spec, "containers"):
        limits = get(c, "resources", "limits", default={})
        requests = get(c, "resources", "requests", default={})
        if not isinstance(limits, dict) or not isinstance(requests, dict):
            raise Unsupported("resources")
        for r in set(limits) | set(requests):
            try:
                add(total, {r: quantity(requests.get(r, limits.get(r)))})
            except Unsupported:
                if strict:
                    raise
    return total


def tolerates(pod, taint):
    for t in items(pod, "spec", "tolerations"):
        if t.get("effect") not in (None, "", taint.get("effect")):
            continue
        if t.get("operator") == "Exists":
            if t.get("key") in (None, "", taint.get("key")):
                return True
        elif t.get("key") == taint.get("key") and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def node_fits(cluster, pod, node, needs, planned):
    name = name_of(node)
    if get(node, "spec", "unschedulable"):
        return False
    for taint in items(node, "spec", "taints"):
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(pod, taint):
            return False
    labels = get(node, "metadata", "labels", default={})
    for k, v in (get(pod, "spec", "nodeSelector", default={}) or {}).items():
        if not isinstance(labels, dict) or labels.get(k) != v:
            return False
    allocatable = get(node, "status", "allocatable", default={})
    if not isinstance(allocatable, dict):
        return False
    used = dict(cluster.used.get(name, {}))
    add(used, planned.get(name, {}))
    for r, n in needs.items():
        if r not in allocatable:
            return False
        try:
            if used.get(r, 0) + n > quantity(allocatable[r]):
                return False
        except Unsupported:
            return False
    return True


# ---------------------------------------------------------------------------------
# Claims


def claim_requests(cluster, claim_spec):
    """[(request name, count, predicates, tolerations)] of a claim spec, or Unsupported."""
    devices = get(claim_spec, "devices", default={})
    if not isinstance(devices, dict) or devices.get("constraints") or devices.get("config"):
        raise Unsupported("claim constraints or config")
    out = []
    for r in items(devices, "requests"):
        exactly = r.get("exactly")
        if not isinstance(exactly, dict) or not isinstance(r.get("name"), str):
            raise Unsupported("firstAvailable")
        if exactly.get("allocationMode", "ExactCount") != "ExactCount":
            raise Unsupported("allocationMode All")
        if exactly.get("adminAccess") or exactly.get("capacity"):
            raise Unsupported("adminAccess or capacity")
        count = exactly.get("count", 1)
        device_class = cluster.classes.get(exactly.get("deviceClassName"))
        if not isinstance(count, int) or count < 1 or device_class is None:
            raise Unsupported("count or class")
        if get(device_class, "spec", "extendedResourceName"):
            raise Unsupported("extended resource class")
        tests = selectors(items(device_class, "spec", "selectors"))
        tests += selectors(items(exactly, "selectors"))
        out.append((r["name"], count, tests, items(exactly, "tolerations")))
    if not out:
        raise Unsupported("no requests")
    return out


def allocate(cluster, requests, node):
    """Device results for the requests on the node, or None.

    BUG 1: the devices other claims hold (allocated in the input, or by this run) are
    not excluded: only the ones this claim already took."""
    taken = set()
    results = []
    for request, count, tests, tolerations in requests:
        for _ in range(count):
            pick = None
            for driver, pool, device in cluster.devices.get(node, []):
                key = (driver, pool, device["name"])
                if key not in taken and all(t(driver, device) for t in tests):
                    pick = key
                    break
            if pick is None:
                return None
            taken.add(pick)
            result = {"request": request, "driver": pick[0], "pool": pick[1], "device": pick[2]}
            if tolerations:
                # Upstream copies the request's tolerations into each result.
                result["tolerations"] = copy.deepcopy(tolerations)
            results.append(result)
    return results


def pod_claims(cluster, pod):
    """[(pod claim name, claim namespace/name or None, claim spec, template)] of a pod,
    or Unsupported: a claim already allocated, or one missing."""
    ns = namespace_of(pod)
    statuses = {s.get("name"): s.get("resourceClaimName") for s in items(pod, "status", "resourceClaimStatuses")}
    out = []
    for ref in items(pod, "spec", "resourceClaims"):
        name = ref.get("name")
        claim_name = ref.get("resourceClaimName") or statuses.get(name)
        if claim_name:
            claim = cluster.claims.get((ns, claim_name))
            if claim is None or get(claim, "status", "allocation") or get(claim, "status", "reservedFor"):
                raise Unsupported("claim missing or in use")
            out.append((name, (ns, claim_name), get(claim, "spec", default={}), None))
        elif ref.get("resourceClaimTemplateName"):
            template = cluster.templates.get((ns, ref["resourceClaimTemplateName"]))
            if template is None:
                raise Unsupported("template missing")
            out.append((name, None, get(template, "spec", "spec", default={}), template))
        else:
            raise Unsupported("claim reference")
    return out


def generated_name(pod, claim):
    """`<pod>-<claim>-<5 characters>`, as the resourceclaim controller names a claim
    (its suffix is random; here a hash of the pod's uid or name)."""
    seed = get(pod, "metadata", "uid") or namespace_of(pod) + "/" + name_of(pod)
    h = 0xCBF29CE484222325  # FNV-1a, 64 bits
    for b in (seed + "/" + str(claim)).encode():
        h = ((h ^ b) * 0x100000001B3) % 2**64
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    suffix = ""
    for _ in range(5):
        h, i = divmod(h, len(alphabet))
        suffix += alphabet[i]
    return "%s-%s-%s" % (name_of(pod), claim, suffix)


def generated_claim(pod, claim, template):
    """The claim the resourceclaim controller creates for a pod's template reference."""
    meta = {
        "name": generated_name(pod, claim),
        "namespace": namespace_of(pod),
        "annotations": {"resource.kubernetes.io/pod-claim-name": claim},
        "finalizers": ["resource.kubernetes.io/delete-protection"],
        "ownerReferences": [{
            "apiVersion": "v1", "kind": "Pod", "name": name_of(pod),
            "uid": get(pod, "metadata", "uid", default=""),
            "controller": True, "blockOwnerDeletion": True,
        }],
    }
    labels = get(template, "spec", "metadata", "labels")
    if isinstance(labels, dict):
        meta["labels"] = copy.deepcopy(labels)
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
        "spec": copy.deepcopy(get(template, "spec", "spec", default={})),
    }


# ---------------------------------------------------------------------------------
# Scheduling


def units(cluster):
    """The pending units in input order: (PodGroup or None, its pending pods)."""
    order, members = [], {}
    for p in cluster.pods:
        if get(p, "spec", "nodeName") or terminal(p) or get(p, "metadata", "deletionTimestamp"):
            continue
        if get(p, "spec", "schedulerName", default="default-scheduler") != "default-scheduler":
            continue
        group = get(p, "spec", "schedulingGroup", "podGroupName")
        key = (namespace_of(p), group) if group else ("pod", namespace_of(p), name_of(p))
        if key not in members:
            order.append(key)
            members[key] = []
        members[key].append(p)
    return [(cluster.groups.get(k) if k[0] != "pod" else None, k, members[k]) for k in order]


def schedule_unit(cluster, group, key, pods, planned):
    """Places every pod of the unit, or returns None (the unit stays pending).

    BUG 2: a PodGroup's schedulingConstraints.topology is not read: each pod goes to
    the first node that fits, whatever its rack."""
    if key[0] != "pod" and group is None:
        return None
    if group is not None and get(group, "spec", "resourceClaims"):
        return None
    if group is not None and len(pods) + running_members(cluster, key) < min_count(group):
        return None
    try:
        plans = []
        for pod in pods:
            if get(pod, "spec", "affinity"):
                raise Unsupported("affinity")
            claims = [(c, ref, claim_requests(cluster, spec), t) for c, ref, spec, t in pod_claims(cluster, pod)]
            plans.append((pod, pod_requests(pod), claims))
    except Unsupported:
        return None
    tentative = {node: dict(v) for node, v in planned.items()}
    placed = []
    for pod, needs, claims in plans:
        for node in cluster.nodes:
            name = name_of(node)
            if not node_fits(cluster, pod, node, needs, tentative):
                continue
            results = [allocate(cluster, requests, name) for _, _, requests, _ in claims]
            if any(r is None for r in results):
                continue
            add(tentative.setdefault(name, {}), needs)
            placed.append((pod, name, list(zip(claims, results))))
            break
        else:
            return None
    planned.clear()
    planned.update(tentative)
    return placed


def min_count(group):
    """A gang's minCount (1 for the basic policy)."""
    n = get(group, "spec", "schedulingPolicy", "gang", "minCount", default=1)
    return n if isinstance(n, int) else 1


def running_members(cluster, key):
    """The group's pods already bound."""
    return sum(
        1 for p in cluster.pods
        if get(p, "spec", "nodeName") and not terminal(p)
        and (namespace_of(p), get(p, "spec", "schedulingGroup", "podGroupName")) == key
    )


def allocation(node, results):
    return {
        "devices": {"results": results},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
    }


def reserved_for(pod):
    ref = {"resource": "pods", "name": name_of(pod)}
    uid = get(pod, "metadata", "uid")
    if uid:
        ref["uid"] = uid
    return [ref]


def decisions(cluster):
    """Whole objects: the bound pods and the allocated (and created) claims."""
    out = []
    planned = {}
    for group, key, pods in units(cluster):
        placed = schedule_unit(cluster, group, key, pods, planned)
        for pod, node, claims in placed or []:
            bound = copy.deepcopy(pod)
            bound.setdefault("spec", {})["nodeName"] = node
            statuses = []
            for (claim, ref, _, template), results in claims:
                if ref is None:
                    obj = generated_claim(pod, claim, template)
                    statuses.append({"name": claim, "resourceClaimName": obj["metadata"]["name"]})
                else:
                    obj = copy.deepcopy(cluster.claims[ref])
                if not isinstance(obj.get("status"), dict):
                    obj["status"] = {}
                obj["status"]["allocation"] = allocation(node, results)
                obj["status"]["reservedFor"] = reserved_for(pod)
                out.append(obj)
            if statuses:
                if not isinstance(bound.get("status"), dict):
                    bound["status"] = {}
                bound["status"]["resourceClaimStatuses"] = statuses
            out.append(bound)
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: naive-scheduler.py SCENARIO.json > decisions.json\n")
        return 2
    with open(argv[1], encoding="utf-8") as f:
        cluster = Cluster(read_objects(f.read()))
    json.dump({"apiVersion": "v1", "kind": "List", "items": decisions(cluster)}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
