-- How far a running operation is (issue 39): a firmware update's task at its BMC, its state,
-- percent and messages, as JSON. The task's reference is kept here as soon as the BMC answers
-- it, so that an operation taken over (after a crash or a transient failure) follows that task
-- rather than starting the update again.
ALTER TABLE operations ADD COLUMN progress TEXT;
