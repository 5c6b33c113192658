-- Inbox listings whose cost follows the page (issue 27 item 4). Each listing's total_count is read
-- from counters that triggers keep exact with every write of campaign_leads, and every listing walks
-- an index in its own order.
--
-- A record's reminder time and its first scheduled reply time, copied onto the record by triggers so
-- the reminders and scheduled views walk one index of campaign_leads in their own order.
ALTER TABLE `campaign_leads` ADD `reminder_at` integer;
--> statement-breakpoint
ALTER TABLE `campaign_leads` ADD `scheduled_reply_at` integer;
--> statement-breakpoint
UPDATE `campaign_leads` SET `reminder_at` = (SELECT r.`remind_at` FROM `reminders` r WHERE r.`campaign_lead_id` = `campaign_leads`.`id`)
WHERE `id` IN (SELECT `campaign_lead_id` FROM `reminders`);
--> statement-breakpoint
UPDATE `campaign_leads` SET `scheduled_reply_at` = (SELECT min(o.`scheduled_at`) FROM `outbound_replies` o
  WHERE o.`campaign_lead_id` = `campaign_leads`.`id` AND o.`status` = 'SCHEDULED')
WHERE `id` IN (SELECT `campaign_lead_id` FROM `outbound_replies` WHERE `status` = 'SCHEDULED');
--> statement-breakpoint
CREATE TRIGGER `reminders_inbox_insert` AFTER INSERT ON `reminders` BEGIN
  UPDATE campaign_leads SET reminder_at = NEW.remind_at WHERE id = NEW.campaign_lead_id;
END;
--> statement-breakpoint
CREATE TRIGGER `reminders_inbox_update` AFTER UPDATE OF `remind_at`, `campaign_lead_id` ON `reminders` BEGIN
  UPDATE campaign_leads SET reminder_at = (SELECT remind_at FROM reminders WHERE campaign_lead_id = OLD.campaign_lead_id)
    WHERE id = OLD.campaign_lead_id;
  UPDATE campaign_leads SET reminder_at = NEW.remind_at WHERE id = NEW.campaign_lead_id;
END;
--> statement-breakpoint
CREATE TRIGGER `reminders_inbox_delete` AFTER DELETE ON `reminders` BEGIN
  UPDATE campaign_leads SET reminder_at = (SELECT remind_at FROM reminders WHERE campaign_lead_id = OLD.campaign_lead_id)
    WHERE id = OLD.campaign_lead_id;
END;
--> statement-breakpoint
CREATE TRIGGER `outbound_replies_inbox_insert` AFTER INSERT ON `outbound_replies` WHEN NEW.status = 'SCHEDULED' BEGIN
  UPDATE campaign_leads SET scheduled_reply_at = (SELECT min(scheduled_at) FROM outbound_replies
    WHERE campaign_lead_id = NEW.campaign_lead_id AND status = 'SCHEDULED') WHERE id = NEW.campaign_lead_id;
END;
--> statement-breakpoint
CREATE TRIGGER `outbound_replies_inbox_update` AFTER UPDATE OF `status`, `scheduled_at`, `campaign_lead_id` ON `outbound_replies`
WHEN OLD.status = 'SCHEDULED' OR NEW.status = 'SCHEDULED' BEGIN
  UPDATE campaign_leads SET scheduled_reply_at = (SELECT min(scheduled_at) FROM outbound_replies
    WHERE campaign_lead_id = OLD.campaign_lead_id AND status = 'SCHEDULED') WHERE id = OLD.campaign_lead_id;
  UPDATE campaign_leads SET scheduled_reply_at = (SELECT min(scheduled_at) FROM outbound_replies
    WHERE campaign_lead_id = NEW.campaign_lead_id AND status = 'SCHEDULED') WHERE id = NEW.campaign_lead_id;
END;
--> statement-breakpoint
CREATE TRIGGER `outbound_replies_inbox_delete` AFTER DELETE ON `outbound_replies` WHEN OLD.status = 'SCHEDULED' BEGIN
  UPDATE campaign_leads SET scheduled_reply_at = (SELECT min(scheduled_at) FROM outbound_replies
    WHERE campaign_lead_id = OLD.campaign_lead_id AND status = 'SCHEDULED') WHERE id = OLD.campaign_lead_id;
END;
--> statement-breakpoint
-- The counters: how many records of an account (inbox_counts), of a client's campaigns
-- (inbox_client_counts) and of a campaign (inbox_campaign_counts) have each combination of the
-- facts the listings and their filters test. `flags` packs them (src/inbox/counts.ts reads the
-- same bits): 1 replied, 2 archived, 4 snoozed (snoozed_until set), 8 read, 16 important, 32 sent,
-- 64 opened, 128 clicked, 256 bounced, 512 unsubscribed, 1024 has a reminder, 2048 has a
-- scheduled reply, 4096 has a last reply time. No category / no team member is 0 (real ids are
-- positive). Only records some listing can hold are counted (replied, sent, important, with a
-- reminder or a scheduled reply). The triggers below were generated from one definition of the
-- key; keep the three levels alike when changing them.
CREATE TABLE `inbox_counts` (
	`account_id` integer NOT NULL,
	`flags` integer NOT NULL,
	`category_id` integer NOT NULL,
	`team_member_id` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`account_id`, `flags`, `category_id`, `team_member_id`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `inbox_client_counts` (
	`client_id` integer NOT NULL,
	`flags` integer NOT NULL,
	`category_id` integer NOT NULL,
	`team_member_id` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`client_id`, `flags`, `category_id`, `team_member_id`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `inbox_campaign_counts` (
	`campaign_id` integer NOT NULL,
	`flags` integer NOT NULL,
	`category_id` integer NOT NULL,
	`team_member_id` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`campaign_id`, `flags`, `category_id`, `team_member_id`),
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO inbox_counts (account_id, flags, category_id, team_member_id, n)
  SELECT x.account_id, (x.has_replied + x.is_archived * 2 + (x.snoozed_until IS NOT NULL) * 4 + x.is_read * 8 + x.is_important * 16
        + x.has_sent * 32 + x.has_opened * 64 + x.has_clicked * 128 + x.has_bounced * 256 + x.has_unsubscribed * 512
        + (x.reminder_at IS NOT NULL) * 1024 + (x.scheduled_reply_at IS NOT NULL) * 2048 + (x.last_reply_at IS NOT NULL) * 4096), coalesce(x.category_id, 0), coalesce(x.team_member_id, 0), count(*)
  FROM campaign_leads x
  WHERE (x.has_replied = 1 OR x.has_sent = 1 OR x.is_important = 1 OR x.reminder_at IS NOT NULL OR x.scheduled_reply_at IS NOT NULL)
  GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO inbox_client_counts (client_id, flags, category_id, team_member_id, n)
  SELECT c.client_id, (x.has_replied + x.is_archived * 2 + (x.snoozed_until IS NOT NULL) * 4 + x.is_read * 8 + x.is_important * 16
        + x.has_sent * 32 + x.has_opened * 64 + x.has_clicked * 128 + x.has_bounced * 256 + x.has_unsubscribed * 512
        + (x.reminder_at IS NOT NULL) * 1024 + (x.scheduled_reply_at IS NOT NULL) * 2048 + (x.last_reply_at IS NOT NULL) * 4096), coalesce(x.category_id, 0), coalesce(x.team_member_id, 0), count(*)
  FROM campaign_leads x JOIN campaigns c ON c.id = x.campaign_id AND c.client_id IS NOT NULL
  WHERE (x.has_replied = 1 OR x.has_sent = 1 OR x.is_important = 1 OR x.reminder_at IS NOT NULL OR x.scheduled_reply_at IS NOT NULL)
  GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO inbox_campaign_counts (campaign_id, flags, category_id, team_member_id, n)
  SELECT x.campaign_id, (x.has_replied + x.is_archived * 2 + (x.snoozed_until IS NOT NULL) * 4 + x.is_read * 8 + x.is_important * 16
        + x.has_sent * 32 + x.has_opened * 64 + x.has_clicked * 128 + x.has_bounced * 256 + x.has_unsubscribed * 512
        + (x.reminder_at IS NOT NULL) * 1024 + (x.scheduled_reply_at IS NOT NULL) * 2048 + (x.last_reply_at IS NOT NULL) * 4096), coalesce(x.category_id, 0), coalesce(x.team_member_id, 0), count(*)
  FROM campaign_leads x
  WHERE (x.has_replied = 1 OR x.has_sent = 1 OR x.is_important = 1 OR x.reminder_at IS NOT NULL OR x.scheduled_reply_at IS NOT NULL)
  GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
CREATE TRIGGER `campaign_leads_inbox_insert` AFTER INSERT ON `campaign_leads` WHEN (NEW.has_replied = 1 OR NEW.has_sent = 1 OR NEW.is_important = 1 OR NEW.reminder_at IS NOT NULL OR NEW.scheduled_reply_at IS NOT NULL) BEGIN
  INSERT INTO inbox_counts (account_id, flags, category_id, team_member_id, n)
    SELECT NEW.account_id, (NEW.has_replied + NEW.is_archived * 2 + (NEW.snoozed_until IS NOT NULL) * 4 + NEW.is_read * 8 + NEW.is_important * 16
        + NEW.has_sent * 32 + NEW.has_opened * 64 + NEW.has_clicked * 128 + NEW.has_bounced * 256 + NEW.has_unsubscribed * 512
        + (NEW.reminder_at IS NOT NULL) * 1024 + (NEW.scheduled_reply_at IS NOT NULL) * 2048 + (NEW.last_reply_at IS NOT NULL) * 4096),
      coalesce(NEW.category_id, 0), coalesce(NEW.team_member_id, 0), 1
    WHERE true
    ON CONFLICT (account_id, flags, category_id, team_member_id) DO UPDATE SET n = n + 1;
  INSERT INTO inbox_client_counts (client_id, flags, category_id, team_member_id, n)
    SELECT (SELECT client_id FROM campaigns WHERE id = NEW.campaign_id), (NEW.has_replied + NEW.is_archived * 2 + (NEW.snoozed_until IS NOT NULL) * 4 + NEW.is_read * 8 + NEW.is_important * 16
        + NEW.has_sent * 32 + NEW.has_opened * 64 + NEW.has_clicked * 128 + NEW.has_bounced * 256 + NEW.has_unsubscribed * 512
        + (NEW.reminder_at IS NOT NULL) * 1024 + (NEW.scheduled_reply_at IS NOT NULL) * 2048 + (NEW.last_reply_at IS NOT NULL) * 4096),
      coalesce(NEW.category_id, 0), coalesce(NEW.team_member_id, 0), 1
    WHERE (SELECT client_id FROM campaigns WHERE id = NEW.campaign_id) IS NOT NULL
    ON CONFLICT (client_id, flags, category_id, team_member_id) DO UPDATE SET n = n + 1;
  INSERT INTO inbox_campaign_counts (campaign_id, flags, category_id, team_member_id, n)
    SELECT NEW.campaign_id, (NEW.has_replied + NEW.is_archived * 2 + (NEW.snoozed_until IS NOT NULL) * 4 + NEW.is_read * 8 + NEW.is_important * 16
        + NEW.has_sent * 32 + NEW.has_opened * 64 + NEW.has_clicked * 128 + NEW.has_bounced * 256 + NEW.has_unsubscribed * 512
        + (NEW.reminder_at IS NOT NULL) * 1024 + (NEW.scheduled_reply_at IS NOT NULL) * 2048 + (NEW.last_reply_at IS NOT NULL) * 4096),
      coalesce(NEW.category_id, 0), coalesce(NEW.team_member_id, 0), 1
    WHERE true
    ON CONFLICT (campaign_id, flags, category_id, team_member_id) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
-- A campaign's delete takes its counts off its client's first (campaigns_inbox_delete) and cascades
-- to its campaign counters (foreign key); its records' decrements then find neither the campaign nor
-- those counters, so nothing is taken twice.
CREATE TRIGGER `campaign_leads_inbox_delete` AFTER DELETE ON `campaign_leads` WHEN (OLD.has_replied = 1 OR OLD.has_sent = 1 OR OLD.is_important = 1 OR OLD.reminder_at IS NOT NULL OR OLD.scheduled_reply_at IS NOT NULL) BEGIN
  UPDATE inbox_counts SET n = n - 1
    WHERE account_id = OLD.account_id AND category_id = coalesce(OLD.category_id, 0)
      AND team_member_id = coalesce(OLD.team_member_id, 0) AND flags = (OLD.has_replied + OLD.is_archived * 2 + (OLD.snoozed_until IS NOT NULL) * 4 + OLD.is_read * 8 + OLD.is_important * 16
        + OLD.has_sent * 32 + OLD.has_opened * 64 + OLD.has_clicked * 128 + OLD.has_bounced * 256 + OLD.has_unsubscribed * 512
        + (OLD.reminder_at IS NOT NULL) * 1024 + (OLD.scheduled_reply_at IS NOT NULL) * 2048 + (OLD.last_reply_at IS NOT NULL) * 4096);
  UPDATE inbox_client_counts SET n = n - 1
    WHERE client_id = (SELECT client_id FROM campaigns WHERE id = OLD.campaign_id) AND category_id = coalesce(OLD.category_id, 0)
      AND team_member_id = coalesce(OLD.team_member_id, 0) AND flags = (OLD.has_replied + OLD.is_archived * 2 + (OLD.snoozed_until IS NOT NULL) * 4 + OLD.is_read * 8 + OLD.is_important * 16
        + OLD.has_sent * 32 + OLD.has_opened * 64 + OLD.has_clicked * 128 + OLD.has_bounced * 256 + OLD.has_unsubscribed * 512
        + (OLD.reminder_at IS NOT NULL) * 1024 + (OLD.scheduled_reply_at IS NOT NULL) * 2048 + (OLD.last_reply_at IS NOT NULL) * 4096);
  UPDATE inbox_campaign_counts SET n = n - 1
    WHERE campaign_id = OLD.campaign_id AND category_id = coalesce(OLD.category_id, 0)
      AND team_member_id = coalesce(OLD.team_member_id, 0) AND flags = (OLD.has_replied + OLD.is_archived * 2 + (OLD.snoozed_until IS NOT NULL) * 4 + OLD.is_read * 8 + OLD.is_important * 16
        + OLD.has_sent * 32 + OLD.has_opened * 64 + OLD.has_clicked * 128 + OLD.has_bounced * 256 + OLD.has_unsubscribed * 512
        + (OLD.reminder_at IS NOT NULL) * 1024 + (OLD.scheduled_reply_at IS NOT NULL) * 2048 + (OLD.last_reply_at IS NOT NULL) * 4096);
END;
--> statement-breakpoint
-- Fires for the columns the counters read; the WHEN skips writes that keep the record's key (a new
-- last_sent_at or last_reply_at, a later snooze time), so sending and replying cost nothing more. A
-- record updated by a cascade from its campaign's or account's delete (its reminder or scheduled
-- reply goes first) adds nothing back to the counters that delete removes.
CREATE TRIGGER `campaign_leads_inbox_update` AFTER UPDATE OF `account_id`, `campaign_id`, `category_id`, `team_member_id`, `is_read`, `is_important`, `is_archived`, `snoozed_until`, `has_sent`, `has_opened`, `has_clicked`, `has_replied`, `has_bounced`, `has_unsubscribed`, `reminder_at`, `scheduled_reply_at`, `last_reply_at` ON `campaign_leads`
WHEN OLD.account_id <> NEW.account_id OR OLD.campaign_id <> NEW.campaign_id OR OLD.category_id IS NOT NEW.category_id
  OR OLD.team_member_id IS NOT NEW.team_member_id OR (OLD.has_replied + OLD.is_archived * 2 + (OLD.snoozed_until IS NOT NULL) * 4 + OLD.is_read * 8 + OLD.is_important * 16
        + OLD.has_sent * 32 + OLD.has_opened * 64 + OLD.has_clicked * 128 + OLD.has_bounced * 256 + OLD.has_unsubscribed * 512
        + (OLD.reminder_at IS NOT NULL) * 1024 + (OLD.scheduled_reply_at IS NOT NULL) * 2048 + (OLD.last_reply_at IS NOT NULL) * 4096) <> (NEW.has_replied + NEW.is_archived * 2 + (NEW.snoozed_until IS NOT NULL) * 4 + NEW.is_read * 8 + NEW.is_important * 16
        + NEW.has_sent * 32 + NEW.has_opened * 64 + NEW.has_clicked * 128 + NEW.has_bounced * 256 + NEW.has_unsubscribed * 512
        + (NEW.reminder_at IS NOT NULL) * 1024 + (NEW.scheduled_reply_at IS NOT NULL) * 2048 + (NEW.last_reply_at IS NOT NULL) * 4096)
BEGIN
  UPDATE inbox_counts SET n = n - 1
    WHERE (OLD.has_replied = 1 OR OLD.has_sent = 1 OR OLD.is_important = 1 OR OLD.reminder_at IS NOT NULL OR OLD.scheduled_reply_at IS NOT NULL) AND account_id = OLD.account_id AND category_id = coalesce(OLD.category_id, 0)
      AND team_member_id = coalesce(OLD.team_member_id, 0) AND flags = (OLD.has_replied + OLD.is_archived * 2 + (OLD.snoozed_until IS NOT NULL) * 4 + OLD.is_read * 8 + OLD.is_important * 16
        + OLD.has_sent * 32 + OLD.has_opened * 64 + OLD.has_clicked * 128 + OLD.has_bounced * 256 + OLD.has_unsubscribed * 512
        + (OLD.reminder_at IS NOT NULL) * 1024 + (OLD.scheduled_reply_at IS NOT NULL) * 2048 + (OLD.last_reply_at IS NOT NULL) * 4096);
  UPDATE inbox_client_counts SET n = n - 1
    WHERE (OLD.has_replied = 1 OR OLD.has_sent = 1 OR OLD.is_important = 1 OR OLD.reminder_at IS NOT NULL OR OLD.scheduled_reply_at IS NOT NULL) AND client_id = (SELECT client_id FROM campaigns WHERE id = OLD.campaign_id) AND category_id = coalesce(OLD.category_id, 0)
      AND team_member_id = coalesce(OLD.team_member_id, 0) AND flags = (OLD.has_replied + OLD.is_archived * 2 + (OLD.snoozed_until IS NOT NULL) * 4 + OLD.is_read * 8 + OLD.is_important * 16
        + OLD.has_sent * 32 + OLD.has_opened * 64 + OLD.has_clicked * 128 + OLD.has_bounced * 256 + OLD.has_unsubscribed * 512
        + (OLD.reminder_at IS NOT NULL) * 1024 + (OLD.scheduled_reply_at IS NOT NULL) * 2048 + (OLD.last_reply_at IS NOT NULL) * 4096);
  UPDATE inbox_campaign_counts SET n = n - 1
    WHERE (OLD.has_replied = 1 OR OLD.has_sent = 1 OR OLD.is_important = 1 OR OLD.reminder_at IS NOT NULL OR OLD.scheduled_reply_at IS NOT NULL) AND campaign_id = OLD.campaign_id AND category_id = coalesce(OLD.category_id, 0)
      AND team_member_id = coalesce(OLD.team_member_id, 0) AND flags = (OLD.has_replied + OLD.is_archived * 2 + (OLD.snoozed_until IS NOT NULL) * 4 + OLD.is_read * 8 + OLD.is_important * 16
        + OLD.has_sent * 32 + OLD.has_opened * 64 + OLD.has_clicked * 128 + OLD.has_bounced * 256 + OLD.has_unsubscribed * 512
        + (OLD.reminder_at IS NOT NULL) * 1024 + (OLD.scheduled_reply_at IS NOT NULL) * 2048 + (OLD.last_reply_at IS NOT NULL) * 4096);
  INSERT INTO inbox_counts (account_id, flags, category_id, team_member_id, n)
    SELECT NEW.account_id, (NEW.has_replied + NEW.is_archived * 2 + (NEW.snoozed_until IS NOT NULL) * 4 + NEW.is_read * 8 + NEW.is_important * 16
        + NEW.has_sent * 32 + NEW.has_opened * 64 + NEW.has_clicked * 128 + NEW.has_bounced * 256 + NEW.has_unsubscribed * 512
        + (NEW.reminder_at IS NOT NULL) * 1024 + (NEW.scheduled_reply_at IS NOT NULL) * 2048 + (NEW.last_reply_at IS NOT NULL) * 4096),
      coalesce(NEW.category_id, 0), coalesce(NEW.team_member_id, 0), 1
    WHERE (NEW.has_replied = 1 OR NEW.has_sent = 1 OR NEW.is_important = 1 OR NEW.reminder_at IS NOT NULL OR NEW.scheduled_reply_at IS NOT NULL) AND EXISTS (SELECT 1 FROM accounts WHERE id = NEW.account_id)
    ON CONFLICT (account_id, flags, category_id, team_member_id) DO UPDATE SET n = n + 1;
  INSERT INTO inbox_client_counts (client_id, flags, category_id, team_member_id, n)
    SELECT (SELECT client_id FROM campaigns WHERE id = NEW.campaign_id), (NEW.has_replied + NEW.is_archived * 2 + (NEW.snoozed_until IS NOT NULL) * 4 + NEW.is_read * 8 + NEW.is_important * 16
        + NEW.has_sent * 32 + NEW.has_opened * 64 + NEW.has_clicked * 128 + NEW.has_bounced * 256 + NEW.has_unsubscribed * 512
        + (NEW.reminder_at IS NOT NULL) * 1024 + (NEW.scheduled_reply_at IS NOT NULL) * 2048 + (NEW.last_reply_at IS NOT NULL) * 4096),
      coalesce(NEW.category_id, 0), coalesce(NEW.team_member_id, 0), 1
    WHERE (NEW.has_replied = 1 OR NEW.has_sent = 1 OR NEW.is_important = 1 OR NEW.reminder_at IS NOT NULL OR NEW.scheduled_reply_at IS NOT NULL) AND (SELECT client_id FROM campaigns WHERE id = NEW.campaign_id) IS NOT NULL
    ON CONFLICT (client_id, flags, category_id, team_member_id) DO UPDATE SET n = n + 1;
  INSERT INTO inbox_campaign_counts (campaign_id, flags, category_id, team_member_id, n)
    SELECT NEW.campaign_id, (NEW.has_replied + NEW.is_archived * 2 + (NEW.snoozed_until IS NOT NULL) * 4 + NEW.is_read * 8 + NEW.is_important * 16
        + NEW.has_sent * 32 + NEW.has_opened * 64 + NEW.has_clicked * 128 + NEW.has_bounced * 256 + NEW.has_unsubscribed * 512
        + (NEW.reminder_at IS NOT NULL) * 1024 + (NEW.scheduled_reply_at IS NOT NULL) * 2048 + (NEW.last_reply_at IS NOT NULL) * 4096),
      coalesce(NEW.category_id, 0), coalesce(NEW.team_member_id, 0), 1
    WHERE (NEW.has_replied = 1 OR NEW.has_sent = 1 OR NEW.is_important = 1 OR NEW.reminder_at IS NOT NULL OR NEW.scheduled_reply_at IS NOT NULL) AND EXISTS (SELECT 1 FROM campaigns WHERE id = NEW.campaign_id)
    ON CONFLICT (campaign_id, flags, category_id, team_member_id) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
-- A campaign moving to another client (or to none) moves its counts with it.
CREATE TRIGGER `campaigns_inbox_client` AFTER UPDATE OF `client_id` ON `campaigns` WHEN OLD.client_id IS NOT NEW.client_id BEGIN
  UPDATE inbox_client_counts SET n = inbox_client_counts.n - k.n FROM inbox_campaign_counts k
    WHERE k.campaign_id = OLD.id AND inbox_client_counts.client_id = OLD.client_id AND inbox_client_counts.flags = k.flags AND inbox_client_counts.category_id = k.category_id AND inbox_client_counts.team_member_id = k.team_member_id;
  INSERT INTO inbox_client_counts (client_id, flags, category_id, team_member_id, n)
    SELECT NEW.client_id, k.flags, k.category_id, k.team_member_id, k.n FROM inbox_campaign_counts k
    WHERE NEW.client_id IS NOT NULL AND k.campaign_id = NEW.id AND k.n <> 0
    ON CONFLICT (client_id, flags, category_id, team_member_id) DO UPDATE SET n = n + excluded.n;
END;
--> statement-breakpoint
CREATE TRIGGER `campaigns_inbox_delete` BEFORE DELETE ON `campaigns` WHEN OLD.client_id IS NOT NULL BEGIN
  UPDATE inbox_client_counts SET n = inbox_client_counts.n - k.n FROM inbox_campaign_counts k
    WHERE k.campaign_id = OLD.id AND inbox_client_counts.client_id = OLD.client_id AND inbox_client_counts.flags = k.flags AND inbox_client_counts.category_id = k.category_id AND inbox_client_counts.team_member_id = k.team_member_id;
END;
