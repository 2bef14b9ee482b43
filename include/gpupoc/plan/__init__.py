"""The POC plan: typed model, loader, cross-field checks and wave expansion."""

from gpupoc.plan.classes import TestClass
from gpupoc.plan.document import Plan
from gpupoc.plan.loader import DEFAULT_PLAN, canonical_json, load_plan, load_plan_file, parse_plan, plan_hash
from gpupoc.plan.model import Adapter, Pool, Tenant, Workload, WorkloadKind
from gpupoc.plan.waves import WaveItem, class_items, find_item

__all__ = [
    "Adapter", "DEFAULT_PLAN", "Plan", "Pool", "Tenant", "TestClass", "WaveItem", "Workload", "WorkloadKind",
    "canonical_json", "class_items", "find_item", "load_plan", "load_plan_file", "parse_plan", "plan_hash",
]
