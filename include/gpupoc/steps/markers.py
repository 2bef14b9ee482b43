"""Names of the run's marker files (under its evidence ``files/``) that tasks of one run wait on."""

PREFLIGHT_FILE = "preflight"        # the class's preflight checks (a missing prerequisite: nothing is submitted)
LEASE_FILE = "lease"                # hold_cluster holds the class's GPU lease
DONE_FILE = "cluster_done"          # cleanup ended the lease
RELEASE_FILE = "release"            # release_gate lifted the wave's gate
RELEASING_FILE = "releasing"        # release_gate began lifting it: a resubmission from now on goes ungated
OBSERVING_FILE = "observing"        # the observer took its first snapshot: the release may go ahead
# how the observer ended: the items still open at its deadline, and the new attempts it waited for after an
# attempt ended, each with whether it came (the tasks waiting for the wave end with it: ``steps.wave_end``)
OBSERVER_END = "observer_end"
OBSERVER_API = "observer_api"  # what the observer's watches cost the API server: lists, relists, bytes
# the wave's pods and its namespaces' events as the observer's watches held them at its end, with their
# resourceVersions: collection resumes them instead of listing again (``pipeline/watch_resume.py``); this file
# names one file per list (``observer_lists-<i>``) with its request and resourceVersion
OBSERVER_LISTS = "observer_lists"
COLLECTOR_API = "collector_api"  # what collection's catch-up watches cost the API server
COLLECTOR_STAGES = "collector_stages"  # where collect_evidence spent its time, stage by stage
OBSERVER_STAGES = "observer_stages"  # where observe spent its time: its looks, then what it saved
# a cleared run starts over: no marker of a past try may count
STALE_MARKERS = (LEASE_FILE, DONE_FILE, RELEASE_FILE, RELEASING_FILE, OBSERVING_FILE, OBSERVER_END, OBSERVER_LISTS)
# either marker: the release has begun (lifting the gates of a large wave takes seconds, and an attempt taken
# away in them must not be resubmitted behind a gate nobody lifts again)
RELEASE_BEGUN = (RELEASING_FILE, RELEASE_FILE)
# the observer's record of the last state of every pod it saw (a pod the platform deletes keeps its record)
OBSERVED_PODS = "observed_pods"
# each wave task's decision on its ended attempt (``decision-<item>-try<N>``, ``steps.attempt_decision``) and its
# record of each pod it submitted or whose creation was refused (``submission-<item>-try<N>``; a bulk shard's
# records a batch per file, ``submissions-<shard>-<n>``: ``steps.submission_files``)
DECISION_PREFIX = "decision-"
SUBMISSION_PREFIX = "submission-"
SUBMISSION_BATCH_PREFIX = "submissions-"
# the names of the cluster's objects (queues, quotas, nodes, priority classes, pod groups) the observer read:
# what a platform's text may name to explain a wait
CLUSTER_NAMES = "cluster_names"
