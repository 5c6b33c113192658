-- Send credit (issue 15 item 8): every event names the send it is credited to (a send itself; an
-- outcome the record's latest send at or before it), with that send's time and mailbox, so the
-- per-mailbox and by-sent-time figures are sums over counters instead of a search per event.
ALTER TABLE `events` ADD `send_id` integer;
--> statement-breakpoint
ALTER TABLE `events` ADD `send_at` integer;
--> statement-breakpoint
ALTER TABLE `events` ADD `send_mailbox_id` integer;
--> statement-breakpoint
UPDATE events SET send_id = id, send_at = occurred_at, send_mailbox_id = email_account_id WHERE type = 'SENT';
--> statement-breakpoint
UPDATE events SET (send_id, send_at, send_mailbox_id) = (SELECT s.id, s.occurred_at, s.email_account_id FROM events s INDEXED BY events_record_time_idx
    WHERE s.campaign_lead_id = events.campaign_lead_id AND s.occurred_at <= events.occurred_at AND s.type = 'SENT'
    ORDER BY s.occurred_at DESC, s.id DESC LIMIT 1)
WHERE type IN ('OPEN', 'CLICK', 'REPLY', 'BOUNCE', 'UNSUBSCRIBE');
--> statement-breakpoint
CREATE INDEX `events_campaign_send_idx` ON `events` (`campaign_id`,`type`,`send_id`,`send_at`) WHERE send_id IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `credit_mailbox_hours` (
	`campaign_id` integer NOT NULL,
	`type` text NOT NULL,
	`hour` integer NOT NULL,
	`mailbox_id` integer NOT NULL,
	`total` integer DEFAULT 0 NOT NULL,
	`counted` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`campaign_id`, `type`, `hour`, `mailbox_id`)
);
--> statement-breakpoint
CREATE TABLE `credit_send_quarters` (
	`campaign_id` integer NOT NULL,
	`type` text NOT NULL,
	`quarter` integer NOT NULL,
	`total` integer DEFAULT 0 NOT NULL,
	`counted` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`campaign_id`, `type`, `quarter`)
);
--> statement-breakpoint
CREATE TABLE `credit_spans` (
	`campaign_lead_id` integer NOT NULL,
	`mailbox_id` integer NOT NULL,
	`type` text NOT NULL,
	`campaign_id` integer NOT NULL,
	`first_at` integer NOT NULL,
	`last_at` integer NOT NULL,
	PRIMARY KEY(`campaign_lead_id`, `mailbox_id`, `type`)
);
--> statement-breakpoint
CREATE INDEX `credit_spans_mailbox_idx` ON `credit_spans` (`campaign_id`,`type`,`mailbox_id`,`last_at`,`first_at`,`campaign_lead_id`);
--> statement-breakpoint
INSERT INTO credit_mailbox_hours (campaign_id, type, hour, mailbox_id, total, counted)
  SELECT campaign_id, type, (occurred_at - ((occurred_at % 3600000) + 3600000) % 3600000), send_mailbox_id, count(*), sum(ignored = 0)
  FROM events WHERE send_mailbox_id IS NOT NULL GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO credit_send_quarters (campaign_id, type, quarter, total, counted)
  SELECT campaign_id, type, (send_at - ((send_at % 900000) + 900000) % 900000), count(*), sum(ignored = 0)
  FROM events WHERE send_at IS NOT NULL GROUP BY 1, 2, 3;
--> statement-breakpoint
INSERT INTO credit_spans (campaign_lead_id, mailbox_id, type, campaign_id, first_at, last_at)
  SELECT campaign_lead_id, send_mailbox_id, type, min(campaign_id), min(occurred_at), max(occurred_at)
  FROM events WHERE send_mailbox_id IS NOT NULL AND type IN ('SENT', 'OPEN', 'CLICK') GROUP BY 1, 2, 3;
--> statement-breakpoint
-- Credit each event as it is written (the counters follow from the update trigger below).
CREATE TRIGGER `events_credit_send` AFTER INSERT ON `events` WHEN NEW.type = 'SENT' BEGIN
  UPDATE events SET send_id = NEW.id, send_at = NEW.occurred_at, send_mailbox_id = NEW.email_account_id WHERE id = NEW.id;
  -- A send written after outcomes it precedes (a late event) takes over those it now answers.
  UPDATE events SET send_id = NEW.id, send_at = NEW.occurred_at, send_mailbox_id = NEW.email_account_id
    WHERE campaign_lead_id = NEW.campaign_lead_id AND occurred_at >= NEW.occurred_at AND type IN ('OPEN', 'CLICK', 'REPLY', 'BOUNCE', 'UNSUBSCRIBE')
      AND (send_at IS NULL OR send_at < NEW.occurred_at OR (send_at = NEW.occurred_at AND send_id < NEW.id));
END;
--> statement-breakpoint
CREATE TRIGGER `events_credit_outcome` AFTER INSERT ON `events` WHEN NEW.type IN ('OPEN', 'CLICK', 'REPLY', 'BOUNCE', 'UNSUBSCRIBE') BEGIN
  UPDATE events SET (send_id, send_at, send_mailbox_id) = (SELECT s.id, s.occurred_at, s.email_account_id FROM events s INDEXED BY events_record_time_idx
    WHERE s.campaign_lead_id = NEW.campaign_lead_id AND s.occurred_at <= NEW.occurred_at AND s.type = 'SENT'
    ORDER BY s.occurred_at DESC, s.id DESC LIMIT 1)
  WHERE id = NEW.id;
END;
--> statement-breakpoint
-- Any change of an event's credit, time, type or ignored flag moves its counts (and spans).
CREATE TRIGGER `events_credit_counts` AFTER UPDATE ON `events`
WHEN OLD.send_at IS NOT NEW.send_at OR OLD.ignored IS NOT NEW.ignored OR OLD.campaign_id IS NOT NEW.campaign_id OR OLD.send_mailbox_id IS NOT NEW.send_mailbox_id OR OLD.occurred_at IS NOT NEW.occurred_at OR OLD.type IS NOT NEW.type OR OLD.campaign_lead_id IS NOT NEW.campaign_lead_id
BEGIN
  UPDATE credit_mailbox_hours SET total = total - 1, counted = counted - (OLD.ignored = 0)
    WHERE OLD.send_mailbox_id IS NOT NULL AND campaign_id = OLD.campaign_id AND type = OLD.type
      AND hour = (OLD.occurred_at - ((OLD.occurred_at % 3600000) + 3600000) % 3600000) AND mailbox_id = OLD.send_mailbox_id;
  UPDATE credit_send_quarters SET total = total - 1, counted = counted - (OLD.ignored = 0)
    WHERE OLD.send_at IS NOT NULL AND campaign_id = OLD.campaign_id AND type = OLD.type AND quarter = (OLD.send_at - ((OLD.send_at % 900000) + 900000) % 900000);
  DELETE FROM credit_spans
    WHERE OLD.send_mailbox_id IS NOT NULL AND OLD.type IN ('SENT', 'OPEN', 'CLICK') AND (OLD.send_mailbox_id IS NOT NEW.send_mailbox_id OR OLD.occurred_at IS NOT NEW.occurred_at OR OLD.type IS NOT NEW.type OR OLD.campaign_lead_id IS NOT NEW.campaign_lead_id)
      AND campaign_lead_id = OLD.campaign_lead_id AND mailbox_id = OLD.send_mailbox_id AND type = OLD.type;
  INSERT INTO credit_spans (campaign_lead_id, mailbox_id, type, campaign_id, first_at, last_at)
    SELECT e.campaign_lead_id, e.send_mailbox_id, e.type, min(e.campaign_id), min(e.occurred_at), max(e.occurred_at)
    FROM events e INDEXED BY events_record_time_idx
    WHERE OLD.send_mailbox_id IS NOT NULL AND OLD.type IN ('SENT', 'OPEN', 'CLICK') AND (OLD.send_mailbox_id IS NOT NEW.send_mailbox_id OR OLD.occurred_at IS NOT NEW.occurred_at OR OLD.type IS NOT NEW.type OR OLD.campaign_lead_id IS NOT NEW.campaign_lead_id)
      AND e.campaign_lead_id = OLD.campaign_lead_id AND e.send_mailbox_id = OLD.send_mailbox_id AND e.type = OLD.type
    GROUP BY e.campaign_lead_id, e.send_mailbox_id, e.type;
  INSERT INTO credit_mailbox_hours (campaign_id, type, hour, mailbox_id, total, counted)
    SELECT NEW.campaign_id, NEW.type, (NEW.occurred_at - ((NEW.occurred_at % 3600000) + 3600000) % 3600000), NEW.send_mailbox_id, 1, NEW.ignored = 0
    WHERE NEW.send_mailbox_id IS NOT NULL
    ON CONFLICT (campaign_id, type, hour, mailbox_id) DO UPDATE SET total = total + 1, counted = counted + excluded.counted;
  INSERT INTO credit_send_quarters (campaign_id, type, quarter, total, counted)
    SELECT NEW.campaign_id, NEW.type, (NEW.send_at - ((NEW.send_at % 900000) + 900000) % 900000), 1, NEW.ignored = 0
    WHERE NEW.send_at IS NOT NULL
    ON CONFLICT (campaign_id, type, quarter) DO UPDATE SET total = total + 1, counted = counted + excluded.counted;
  INSERT INTO credit_spans (campaign_lead_id, mailbox_id, type, campaign_id, first_at, last_at)
    SELECT NEW.campaign_lead_id, NEW.send_mailbox_id, NEW.type, NEW.campaign_id, NEW.occurred_at, NEW.occurred_at
    WHERE NEW.send_mailbox_id IS NOT NULL AND NEW.type IN ('SENT', 'OPEN', 'CLICK')
    ON CONFLICT (campaign_lead_id, mailbox_id, type) DO UPDATE SET first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at)
      WHERE excluded.first_at < first_at OR excluded.last_at > last_at;
END;
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
  UPDATE events SET (send_id, send_at, send_mailbox_id) = (SELECT s.id, s.occurred_at, s.email_account_id FROM events s INDEXED BY events_record_time_idx
    WHERE s.campaign_lead_id = events.campaign_lead_id AND s.occurred_at <= events.occurred_at AND s.type = 'SENT'
    ORDER BY s.occurred_at DESC, s.id DESC LIMIT 1)
  WHERE OLD.type = 'SENT' AND campaign_lead_id = OLD.campaign_lead_id AND send_id = OLD.id;
END;
