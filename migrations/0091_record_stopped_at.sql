-- When the record last turned STOPPED (CONTRACT 13.3 and 13.6 count `stopped_count` by it): its
-- updated_at moves with every later write (a category change, a revenue, a read flag), which moved the
-- stop out of its window. A stop an event causes (an UNSUBSCRIBE, a reply on a pushed record's parent
-- thread) is dated by that event, which its statement writes; any other stop (by hand, the engine's
-- refusal of an opted-out lead) is dated by the trigger below when its statement says nothing. A
-- record that leaves STOPPED keeps the time (it did stop then); a later stop replaces it.
ALTER TABLE campaign_leads ADD COLUMN stopped_at INTEGER;
CREATE INDEX campaign_leads_stopped_idx ON campaign_leads (campaign_id, stopped_at) WHERE stopped_at IS NOT NULL;

CREATE TRIGGER campaign_leads_stopped AFTER UPDATE OF state ON campaign_leads
WHEN NEW.state = 'STOPPED' AND OLD.state IS NOT 'STOPPED' AND NEW.stopped_at IS OLD.stopped_at BEGIN
  UPDATE campaign_leads SET stopped_at = CAST(unixepoch('subsec') * 1000 AS INTEGER) WHERE id = NEW.id;
END;

-- Records already STOPPED: an opted-out one stopped at its first UNSUBSCRIBE; for the others the
-- last write is the best that is known.
UPDATE campaign_leads SET stopped_at = coalesce(
  (SELECT min(e.occurred_at) FROM events e INDEXED BY events_record_time_idx WHERE e.campaign_lead_id = campaign_leads.id AND e.type = 'UNSUBSCRIBE'),
  updated_at)
WHERE state = 'STOPPED';
