-- The root model a turn request named (`model`, `provider/model`); NULL when it named none and the run
-- used the policy's model. Recorded with the run so a replay and the run's listing can tell it.
ALTER TABLE turn_runs ADD COLUMN model TEXT;
