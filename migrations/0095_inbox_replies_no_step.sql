-- A reply sent from the inbox is a person's message in the thread, no step of the campaign (CONTRACT 12):
-- its SENT is stored with sequence number 0 (src/events/rules.ts PERSON_STEP; steps start at 1). Campaign
-- figures count the campaign's emails, so such a SENT enters no event span (sent to, unique sent, first
-- send) and is no send that outcomes are credited to: a lead's answer to it stays credited to the step
-- the campaign last sent. Its hour counters sit under sequence 0, which the queries leave out.
DROP TRIGGER `events_analytics_insert`;
--> statement-breakpoint
CREATE TRIGGER `events_analytics_insert` AFTER INSERT ON `events` BEGIN
  INSERT INTO event_hour_counts (campaign_id, type, hour, sequence_number, total, human, counted)
    VALUES (NEW.campaign_id, NEW.type, (NEW.occurred_at - ((NEW.occurred_at % 3600000) + 3600000) % 3600000), NEW.sequence_number, 1, NEW.is_machine = 0, NEW.ignored = 0)
    ON CONFLICT (campaign_id, type, hour, sequence_number) DO UPDATE SET total = total + 1, human = human + excluded.human, counted = counted + excluded.counted;
  INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at, lead_id)
    SELECT NEW.campaign_lead_id, k.kind, NEW.campaign_id, NEW.occurred_at, NEW.occurred_at, (SELECT cl.lead_id FROM campaign_leads cl WHERE cl.id = NEW.campaign_lead_id)
    FROM event_span_kinds k WHERE k.type = NEW.type AND (k.seq1 = 0 OR NEW.sequence_number = 1) AND (NEW.type <> 'SENT' OR NEW.sequence_number <> 0) AND (k.human = 0 OR NEW.is_machine = 0)
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
    FROM events e JOIN event_span_kinds k ON k.type = e.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (e.type <> 'SENT' OR e.sequence_number <> 0) AND (k.human = 0 OR e.is_machine = 0)
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
    FROM events e JOIN event_span_kinds k ON k.type = e.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (e.type <> 'SENT' OR e.sequence_number <> 0) AND (k.human = 0 OR e.is_machine = 0)
    WHERE e.campaign_lead_id = OLD.campaign_lead_id
    GROUP BY e.campaign_lead_id, k.kind;
  DELETE FROM event_spans WHERE campaign_lead_id = NEW.campaign_lead_id;
  INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at, lead_id)
    SELECT e.campaign_lead_id, k.kind, e.campaign_id, min(e.occurred_at), max(e.occurred_at), (SELECT cl.lead_id FROM campaign_leads cl WHERE cl.id = NEW.campaign_lead_id)
    FROM events e JOIN event_span_kinds k ON k.type = e.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (e.type <> 'SENT' OR e.sequence_number <> 0) AND (k.human = 0 OR e.is_machine = 0)
    WHERE e.campaign_lead_id = NEW.campaign_lead_id
    GROUP BY e.campaign_lead_id, k.kind;
END;
--> statement-breakpoint
DROP TRIGGER `events_credit_send`;
--> statement-breakpoint
CREATE TRIGGER `events_credit_send` AFTER INSERT ON `events` WHEN NEW.type = 'SENT' AND NEW.sequence_number <> 0 BEGIN
  UPDATE events SET send_id = NEW.id, send_at = NEW.occurred_at, send_mailbox_id = NEW.email_account_id WHERE id = NEW.id;
  -- A send written after outcomes it precedes (a late event) takes over those it now answers.
  UPDATE events SET send_id = NEW.id, send_at = NEW.occurred_at, send_mailbox_id = NEW.email_account_id
    WHERE campaign_lead_id = NEW.campaign_lead_id AND occurred_at >= NEW.occurred_at AND type IN ('OPEN', 'CLICK', 'REPLY', 'BOUNCE', 'UNSUBSCRIBE')
      AND (send_at IS NULL OR send_at < NEW.occurred_at OR (send_at = NEW.occurred_at AND send_id < NEW.id));
END;
--> statement-breakpoint
DROP TRIGGER `events_credit_outcome`;
--> statement-breakpoint
CREATE TRIGGER `events_credit_outcome` AFTER INSERT ON `events` WHEN NEW.type IN ('OPEN', 'CLICK', 'REPLY', 'BOUNCE', 'UNSUBSCRIBE') BEGIN
  UPDATE events SET (send_id, send_at, send_mailbox_id) = (SELECT s.id, s.occurred_at, s.email_account_id FROM events s INDEXED BY events_record_sent_idx
    WHERE s.campaign_lead_id = NEW.campaign_lead_id AND s.occurred_at <= NEW.occurred_at AND s.type = 'SENT' AND s.sequence_number <> 0
    ORDER BY s.occurred_at DESC, s.id DESC LIMIT 1)
  WHERE id = NEW.id;
END;
--> statement-breakpoint
DROP TRIGGER `events_credit_delete`;
--> statement-breakpoint
CREATE TRIGGER `events_credit_delete` AFTER DELETE ON `events` BEGIN
  UPDATE credit_mailbox_hours SET total = total - 1, counted = counted - (OLD.ignored = 0)
    WHERE OLD.send_mailbox_id IS NOT NULL AND campaign_id = OLD.campaign_id AND type = OLD.type
      AND hour = (OLD.occurred_at - ((OLD.occurred_at % 3600000) + 3600000) % 3600000) AND mailbox_id = OLD.send_mailbox_id;
  UPDATE credit_send_quarters SET total = total - 1, counted = counted - (OLD.ignored = 0)
    WHERE OLD.send_at IS NOT NULL AND campaign_id = OLD.campaign_id AND type = OLD.type AND quarter = (OLD.send_at - ((OLD.send_at % 900000) + 900000) % 900000);
  DELETE FROM credit_spans
    WHERE OLD.send_mailbox_id IS NOT NULL AND OLD.type IN ('SENT', 'OPEN', 'CLICK') AND (1)
      AND campaign_lead_id = OLD.campaign_lead_id AND mailbox_id = OLD.send_mailbox_id AND type = OLD.type;
  INSERT INTO credit_spans (campaign_lead_id, mailbox_id, type, campaign_id, first_at, last_at)
    SELECT e.campaign_lead_id, e.send_mailbox_id, e.type, min(e.campaign_id), min(e.occurred_at), max(e.occurred_at)
    FROM events e INDEXED BY events_record_time_idx
    WHERE OLD.send_mailbox_id IS NOT NULL AND OLD.type IN ('SENT', 'OPEN', 'CLICK') AND (1)
      AND e.campaign_lead_id = OLD.campaign_lead_id AND e.send_mailbox_id = OLD.send_mailbox_id AND e.type = OLD.type
    GROUP BY e.campaign_lead_id, e.send_mailbox_id, e.type;
  -- Outcomes the deleted send answered fall back to the send before it.
  UPDATE events SET (send_id, send_at, send_mailbox_id) = (SELECT s.id, s.occurred_at, s.email_account_id FROM events s INDEXED BY events_record_sent_idx
    WHERE s.campaign_lead_id = events.campaign_lead_id AND s.occurred_at <= events.occurred_at AND s.type = 'SENT' AND s.sequence_number <> 0
    ORDER BY s.occurred_at DESC, s.id DESC LIMIT 1)
  WHERE OLD.type = 'SENT' AND campaign_lead_id = OLD.campaign_lead_id AND send_id = OLD.id;
END;
--> statement-breakpoint
-- Inbox replies stored before: filed under the step they answered (step 1 in a thread not yet written
-- to). The update trigger moves their hour counts and rebuilds their records' spans.
UPDATE events SET sequence_number = 0 WHERE type = 'SENT' AND event_id LIKE 'inbox-reply:%';
--> statement-breakpoint
-- They are no send: their credit counters go (events_credit_counts), and the outcomes credited to them
-- go back to the record's latest campaign send before each.
UPDATE events SET send_id = NULL, send_at = NULL, send_mailbox_id = NULL WHERE type = 'SENT' AND sequence_number = 0;
--> statement-breakpoint
UPDATE events SET (send_id, send_at, send_mailbox_id) = (SELECT s.id, s.occurred_at, s.email_account_id FROM events s INDEXED BY events_record_sent_idx
    WHERE s.campaign_lead_id = events.campaign_lead_id AND s.occurred_at <= events.occurred_at AND s.type = 'SENT' AND s.sequence_number <> 0
    ORDER BY s.occurred_at DESC, s.id DESC LIMIT 1)
WHERE type IN ('OPEN', 'CLICK', 'REPLY', 'BOUNCE', 'UNSUBSCRIBE') AND send_id IN (SELECT id FROM events WHERE type = 'SENT' AND sequence_number = 0);
--> statement-breakpoint
-- Their records were marked sent to by them: the sent flag and last send time from the campaign's sends alone.
UPDATE campaign_leads SET
    has_sent = EXISTS (SELECT 1 FROM events e WHERE e.campaign_lead_id = campaign_leads.id AND e.type = 'SENT' AND e.sequence_number <> 0),
    last_sent_at = (SELECT max(e.occurred_at) FROM events e WHERE e.campaign_lead_id = campaign_leads.id AND e.type = 'SENT' AND e.sequence_number <> 0)
WHERE id IN (SELECT campaign_lead_id FROM events WHERE type = 'SENT' AND sequence_number = 0);
