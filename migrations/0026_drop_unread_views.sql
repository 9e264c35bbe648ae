-- The read views no domain reads any more (issue 36 d4): discovery asks behaviour's api for its
-- queued subjects, learning's subject evidence gets the prediction and observation ids handed in
-- with the subject's scope, and memory curation asks tenancy's api for the projects.
DROP VIEW IF EXISTS behavior_prediction_read;
DROP VIEW IF EXISTS behavior_mining_read;
DROP VIEW IF EXISTS tenancy_project_read;
