-- Leasing serves a pod manager running nothing first: it finds each pod manager's oldest queued
-- operation by this index, without walking the queues of the others (store/operations.rs).
CREATE INDEX operations_pm_queue ON operations (pod_manager, status, id);
