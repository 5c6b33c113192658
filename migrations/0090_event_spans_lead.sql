-- Each span names its record's lead (CONTRACT 13.7: unique_lead_count and unique_open_count count
-- distinct leads, a lead being one person per account), so a group of campaigns counts the leads it
-- reached in a window from the spans alone: joining every span to its record (adc7607) read
-- campaign_leads once a span. A record deleted from its campaign keeps its events and spans but names
-- no lead any more: its spans hold NULL and count as a lead of their own, which is also what a move's
-- target rebuilds from the rows it copies.
ALTER TABLE `event_spans` ADD `lead_id` integer;
--> statement-breakpoint
UPDATE event_spans SET lead_id = (SELECT cl.lead_id FROM campaign_leads cl WHERE cl.id = event_spans.campaign_lead_id);
--> statement-breakpoint
-- Each campaign's spans of a kind in lead order: the distinct leads of several campaigns are counted
-- without sorting their spans first.
CREATE INDEX `event_spans_lead_idx` ON `event_spans` (`campaign_id`,`kind`,`lead_id`,`last_at`,`first_at`,`campaign_lead_id`);
--> statement-breakpoint
DROP TRIGGER `events_analytics_insert`;
--> statement-breakpoint
CREATE TRIGGER `events_analytics_insert` AFTER INSERT ON `events` BEGIN
  INSERT INTO event_hour_counts (campaign_id, type, hour, sequence_number, total, human, counted)
    VALUES (NEW.campaign_id, NEW.type, (NEW.occurred_at - ((NEW.occurred_at % 3600000) + 3600000) % 3600000), NEW.sequence_number, 1, NEW.is_machine = 0, NEW.ignored = 0)
    ON CONFLICT (campaign_id, type, hour, sequence_number) DO UPDATE SET total = total + 1, human = human + excluded.human, counted = counted + excluded.counted;
  INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at, lead_id)
    SELECT NEW.campaign_lead_id, k.kind, NEW.campaign_id, NEW.occurred_at, NEW.occurred_at, (SELECT cl.lead_id FROM campaign_leads cl WHERE cl.id = NEW.campaign_lead_id)
    FROM event_span_kinds k WHERE k.type = NEW.type AND (k.seq1 = 0 OR NEW.sequence_number = 1) AND (k.human = 0 OR NEW.is_machine = 0)
    ON CONFLICT (campaign_lead_id, kind) DO UPDATE SET first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at)
      -- An event inside the span changes nothing: leave the row and its index entry alone.
      WHERE excluded.first_at < first_at OR excluded.last_at > last_at;
END;
--> statement-breakpoint
DROP TRIGGER `events_analytics_delete`;
--> statement-breakpoint
CREATE TRIGGER `events_analytics_delete` AFTER DELETE ON `events` BEGIN
  UPDATE event_hour_counts SET total = total - 1, human = human - (OLD.is_machine = 0), counted = counted - (OLD.ignored = 0)
    WHERE campaign_id = OLD.campaign_id AND type = OLD.type AND hour = (OLD.occurred_at - ((OLD.occurred_at % 3600000) + 3600000) % 3600000)
      AND sequence_number = OLD.sequence_number;
  DELETE FROM event_spans WHERE campaign_lead_id = OLD.campaign_lead_id;
  INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at, lead_id)
    SELECT e.campaign_lead_id, k.kind, e.campaign_id, min(e.occurred_at), max(e.occurred_at), (SELECT cl.lead_id FROM campaign_leads cl WHERE cl.id = OLD.campaign_lead_id)
    FROM events e JOIN event_span_kinds k ON k.type = e.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (k.human = 0 OR e.is_machine = 0)
    WHERE e.campaign_lead_id = OLD.campaign_lead_id
    GROUP BY e.campaign_lead_id, k.kind;
END;
--> statement-breakpoint
DROP TRIGGER `events_analytics_update`;
--> statement-breakpoint
CREATE TRIGGER `events_analytics_update` AFTER UPDATE OF `campaign_id`, `campaign_lead_id`, `type`, `occurred_at`, `sequence_number`, `is_machine`, `ignored` ON `events` BEGIN
  UPDATE event_hour_counts SET total = total - 1, human = human - (OLD.is_machine = 0), counted = counted - (OLD.ignored = 0)
    WHERE campaign_id = OLD.campaign_id AND type = OLD.type AND hour = (OLD.occurred_at - ((OLD.occurred_at % 3600000) + 3600000) % 3600000)
      AND sequence_number = OLD.sequence_number;
  INSERT INTO event_hour_counts (campaign_id, type, hour, sequence_number, total, human, counted)
    VALUES (NEW.campaign_id, NEW.type, (NEW.occurred_at - ((NEW.occurred_at % 3600000) + 3600000) % 3600000), NEW.sequence_number, 1, NEW.is_machine = 0, NEW.ignored = 0)
    ON CONFLICT (campaign_id, type, hour, sequence_number) DO UPDATE SET total = total + 1, human = human + excluded.human, counted = counted + excluded.counted;
  DELETE FROM event_spans WHERE campaign_lead_id = OLD.campaign_lead_id;
  INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at, lead_id)
    SELECT e.campaign_lead_id, k.kind, e.campaign_id, min(e.occurred_at), max(e.occurred_at), (SELECT cl.lead_id FROM campaign_leads cl WHERE cl.id = OLD.campaign_lead_id)
    FROM events e JOIN event_span_kinds k ON k.type = e.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (k.human = 0 OR e.is_machine = 0)
    WHERE e.campaign_lead_id = OLD.campaign_lead_id
    GROUP BY e.campaign_lead_id, k.kind;
  DELETE FROM event_spans WHERE campaign_lead_id = NEW.campaign_lead_id;
  INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at, lead_id)
    SELECT e.campaign_lead_id, k.kind, e.campaign_id, min(e.occurred_at), max(e.occurred_at), (SELECT cl.lead_id FROM campaign_leads cl WHERE cl.id = NEW.campaign_lead_id)
    FROM events e JOIN event_span_kinds k ON k.type = e.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (k.human = 0 OR e.is_machine = 0)
    WHERE e.campaign_lead_id = NEW.campaign_lead_id
    GROUP BY e.campaign_lead_id, k.kind;
END;
--> statement-breakpoint
-- The record's lead as the record comes and goes, whichever of a record and its events is written
-- first (a move's copy writes rows with their ids kept).
CREATE TRIGGER `campaign_leads_spans_insert` AFTER INSERT ON `campaign_leads` BEGIN
  UPDATE event_spans SET lead_id = NEW.lead_id WHERE campaign_lead_id = NEW.id;
END;
--> statement-breakpoint
CREATE TRIGGER `campaign_leads_spans_delete` AFTER DELETE ON `campaign_leads` BEGIN
  UPDATE event_spans SET lead_id = NULL WHERE campaign_lead_id = OLD.id;
END;
