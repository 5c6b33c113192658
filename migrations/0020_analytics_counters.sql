-- Analytics counters (CONTRACT section 3 and 13; issue 15 item 8): hourly totals per campaign,
-- event type and sequence step, and each record's first and last event per kind, kept exact by triggers on events.
CREATE TABLE `event_hour_counts` (
	`campaign_id` integer NOT NULL,
	`type` text NOT NULL,
	`hour` integer NOT NULL,
	`sequence_number` integer NOT NULL,
	`total` integer DEFAULT 0 NOT NULL,
	`human` integer DEFAULT 0 NOT NULL,
	`counted` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`campaign_id`, `type`, `hour`, `sequence_number`)
);
--> statement-breakpoint
CREATE TABLE `event_span_kinds` (
	`kind` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`seq1` integer NOT NULL,
	`human` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `event_span_kinds` (`kind`, `type`, `seq1`, `human`) VALUES
	('SENT', 'SENT', 0, 0), ('SENT1', 'SENT', 1, 0), ('OPEN', 'OPEN', 0, 0), ('OPEN_HUMAN', 'OPEN', 0, 1),
	('CLICK', 'CLICK', 0, 0), ('CLICK_HUMAN', 'CLICK', 0, 1), ('REPLY', 'REPLY', 0, 0);
--> statement-breakpoint
CREATE TABLE `event_spans` (
	`campaign_lead_id` integer NOT NULL,
	`kind` text NOT NULL,
	`campaign_id` integer NOT NULL,
	`first_at` integer NOT NULL,
	`last_at` integer NOT NULL,
	PRIMARY KEY(`campaign_lead_id`, `kind`)
);
--> statement-breakpoint
CREATE INDEX `event_spans_last_idx` ON `event_spans` (`campaign_id`,`kind`,`last_at`,`first_at`,`campaign_lead_id`);
--> statement-breakpoint
CREATE INDEX `campaign_leads_campaign_category_idx` ON `campaign_leads` (`campaign_id`,`category_id`);
--> statement-breakpoint
INSERT INTO event_hour_counts (campaign_id, type, hour, sequence_number, total, human, counted)
  SELECT campaign_id, type, (occurred_at - ((occurred_at % 3600000) + 3600000) % 3600000), sequence_number, count(*), sum(is_machine = 0), sum(ignored = 0)
  FROM events GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at)
  SELECT e.campaign_lead_id, k.kind, e.campaign_id, min(e.occurred_at), max(e.occurred_at)
  FROM events e JOIN event_span_kinds k ON k.type = e.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (k.human = 0 OR e.is_machine = 0)
  GROUP BY e.campaign_lead_id, k.kind;
--> statement-breakpoint
CREATE TRIGGER `events_analytics_insert` AFTER INSERT ON `events` BEGIN
  INSERT INTO event_hour_counts (campaign_id, type, hour, sequence_number, total, human, counted)
    VALUES (NEW.campaign_id, NEW.type, (NEW.occurred_at - ((NEW.occurred_at % 3600000) + 3600000) % 3600000), NEW.sequence_number, 1, NEW.is_machine = 0, NEW.ignored = 0)
    ON CONFLICT (campaign_id, type, hour, sequence_number) DO UPDATE SET total = total + 1, human = human + excluded.human, counted = counted + excluded.counted;
  INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at)
    SELECT NEW.campaign_lead_id, k.kind, NEW.campaign_id, NEW.occurred_at, NEW.occurred_at
    FROM event_span_kinds k WHERE k.type = NEW.type AND (k.seq1 = 0 OR NEW.sequence_number = 1) AND (k.human = 0 OR NEW.is_machine = 0)
    ON CONFLICT (campaign_lead_id, kind) DO UPDATE SET first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at)
      -- An event inside the span changes nothing: leave the row and its index entry alone.
      WHERE excluded.first_at < first_at OR excluded.last_at > last_at;
END;
--> statement-breakpoint
CREATE TRIGGER `events_analytics_delete` AFTER DELETE ON `events` BEGIN
  UPDATE event_hour_counts SET total = total - 1, human = human - (OLD.is_machine = 0), counted = counted - (OLD.ignored = 0)
    WHERE campaign_id = OLD.campaign_id AND type = OLD.type AND hour = (OLD.occurred_at - ((OLD.occurred_at % 3600000) + 3600000) % 3600000)
      AND sequence_number = OLD.sequence_number;
  DELETE FROM event_spans WHERE campaign_lead_id = OLD.campaign_lead_id;
  INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at)
    SELECT e.campaign_lead_id, k.kind, e.campaign_id, min(e.occurred_at), max(e.occurred_at)
    FROM events e JOIN event_span_kinds k ON k.type = e.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (k.human = 0 OR e.is_machine = 0)
    WHERE e.campaign_lead_id = OLD.campaign_lead_id
    GROUP BY e.campaign_lead_id, k.kind;
END;
--> statement-breakpoint
CREATE TRIGGER `events_analytics_update` AFTER UPDATE OF `campaign_id`, `campaign_lead_id`, `type`, `occurred_at`, `sequence_number`, `is_machine`, `ignored` ON `events` BEGIN
  UPDATE event_hour_counts SET total = total - 1, human = human - (OLD.is_machine = 0), counted = counted - (OLD.ignored = 0)
    WHERE campaign_id = OLD.campaign_id AND type = OLD.type AND hour = (OLD.occurred_at - ((OLD.occurred_at % 3600000) + 3600000) % 3600000)
      AND sequence_number = OLD.sequence_number;
  INSERT INTO event_hour_counts (campaign_id, type, hour, sequence_number, total, human, counted)
    VALUES (NEW.campaign_id, NEW.type, (NEW.occurred_at - ((NEW.occurred_at % 3600000) + 3600000) % 3600000), NEW.sequence_number, 1, NEW.is_machine = 0, NEW.ignored = 0)
    ON CONFLICT (campaign_id, type, hour, sequence_number) DO UPDATE SET total = total + 1, human = human + excluded.human, counted = counted + excluded.counted;
  DELETE FROM event_spans WHERE campaign_lead_id = OLD.campaign_lead_id;
  INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at)
    SELECT e.campaign_lead_id, k.kind, e.campaign_id, min(e.occurred_at), max(e.occurred_at)
    FROM events e JOIN event_span_kinds k ON k.type = e.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (k.human = 0 OR e.is_machine = 0)
    WHERE e.campaign_lead_id = OLD.campaign_lead_id
    GROUP BY e.campaign_lead_id, k.kind;
  DELETE FROM event_spans WHERE campaign_lead_id = NEW.campaign_lead_id;
  INSERT INTO event_spans (campaign_lead_id, kind, campaign_id, first_at, last_at)
    SELECT e.campaign_lead_id, k.kind, e.campaign_id, min(e.occurred_at), max(e.occurred_at)
    FROM events e JOIN event_span_kinds k ON k.type = e.type AND (k.seq1 = 0 OR e.sequence_number = 1) AND (k.human = 0 OR e.is_machine = 0)
    WHERE e.campaign_lead_id = NEW.campaign_lead_id
    GROUP BY e.campaign_lead_id, k.kind;
END;
