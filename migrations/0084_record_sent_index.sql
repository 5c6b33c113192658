-- A record's sends as their own index: an outcome (open, click, reply...) is credited to the record's
-- latest send at or before it, and that lookup walked back through every event of the record in
-- events_record_time_idx until it met a send. A pixel loaded thousands of times (a forwarded email, a
-- proxy re-fetching) made each further hit read all the earlier ones; now it is one seek, whatever the
-- record's history. Only sends enter the index.
CREATE INDEX `events_record_sent_idx` ON `events` (`campaign_lead_id`,`occurred_at`) WHERE type = 'SENT';
--> statement-breakpoint
DROP TRIGGER `events_credit_outcome`;
--> statement-breakpoint
CREATE TRIGGER `events_credit_outcome` AFTER INSERT ON `events` WHEN NEW.type IN ('OPEN', 'CLICK', 'REPLY', 'BOUNCE', 'UNSUBSCRIBE') BEGIN
  UPDATE events SET (send_id, send_at, send_mailbox_id) = (SELECT s.id, s.occurred_at, s.email_account_id FROM events s INDEXED BY events_record_sent_idx
    WHERE s.campaign_lead_id = NEW.campaign_lead_id AND s.occurred_at <= NEW.occurred_at AND s.type = 'SENT'
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
    WHERE s.campaign_lead_id = events.campaign_lead_id AND s.occurred_at <= events.occurred_at AND s.type = 'SENT'
    ORDER BY s.occurred_at DESC, s.id DESC LIMIT 1)
  WHERE OLD.type = 'SENT' AND campaign_lead_id = OLD.campaign_lead_id AND send_id = OLD.id;
END;
