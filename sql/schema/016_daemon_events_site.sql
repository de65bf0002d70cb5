-- The probe site of the daemon that wrote an event (``[warehouse].probe_site``, else its
-- host name, as probe_results.probe_site). Two sites on one host share a host name, so
-- `nerfwatch status` read the other site's heartbeat as its own: a dead daemon looked
-- alive. NULL on events written before this column existed; status reads those by host.
ALTER TABLE daemon_events ADD COLUMN site VARCHAR;
