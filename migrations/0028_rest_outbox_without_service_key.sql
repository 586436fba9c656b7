-- The queue's rows no longer carry a foreign key to their service. Its check ran in every
-- statement that stores a record of a form with a service, and took a key-share lock on the
-- service's one row: concurrent submissions all locking the same row made PostgreSQL build a new
-- multixact for each of them, and the dispatcher's updates of that row (its delivery log) had to
-- carry them. A deleted service's queue is removed with it (deleteService, in the same statement);
-- a record stored by a statement that read the service just before its deletion committed can
-- leave a row behind, which no claim ever reaches (claims start from the services) and which the
-- dispatcher removes when it starts (removeOrphanedDeliveries).
ALTER TABLE rest_service_outbox DROP CONSTRAINT rest_service_outbox_service_id_fkey;
