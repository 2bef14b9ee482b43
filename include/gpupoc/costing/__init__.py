"""Cost in money: the plan's prices (``prices``) and allocation as OpenCost computes it (``allocation``).

Not to be confused with ``gpupoc.plan.cost``, which counts what a daily run asks of the cluster in GPU-hours.
"""
