-- Leads and tags get a client scope (NULL = the account itself). A row used by campaigns of
-- more than one scope keeps the first scope (the account's before any client's) and is copied
-- once per other scope; those campaigns' rows are repointed to the copy (the new unique index is
-- built before the repointing, which looks the copies up through it).
ALTER TABLE `leads` ADD `client_id` integer REFERENCES `clients`(`id`);--> statement-breakpoint
ALTER TABLE `tags` ADD `client_id` integer REFERENCES `clients`(`id`);--> statement-breakpoint
DROP INDEX `leads_account_email_idx`;--> statement-breakpoint
DROP INDEX `tags_account_name_idx`;--> statement-breakpoint
UPDATE `leads` SET `client_id` = (
	SELECT c.client_id FROM campaign_leads cl JOIN campaigns c ON c.id = cl.campaign_id
	WHERE cl.lead_id = leads.id ORDER BY coalesce(c.client_id, 0) LIMIT 1
);--> statement-breakpoint
INSERT INTO `leads` (account_id, client_id, email, first_name, last_name, company_name, phone_number, website,
	location, linkedin_profile, company_url, custom_fields, created_at)
SELECT DISTINCT l.account_id, c.client_id, l.email, l.first_name, l.last_name, l.company_name, l.phone_number, l.website,
	l.location, l.linkedin_profile, l.company_url, l.custom_fields, l.created_at
FROM leads l JOIN campaign_leads cl ON cl.lead_id = l.id JOIN campaigns c ON c.id = cl.campaign_id
WHERE coalesce(c.client_id, 0) <> coalesce(l.client_id, 0);--> statement-breakpoint
CREATE UNIQUE INDEX `leads_account_scope_email_idx` ON `leads` (`account_id`,coalesce("client_id", 0),`email`);--> statement-breakpoint
UPDATE `campaign_leads` SET `lead_id` = (
	SELECT copy.id FROM leads original, leads copy, campaigns c
	WHERE original.id = campaign_leads.lead_id AND c.id = campaign_leads.campaign_id
		AND copy.account_id = original.account_id AND copy.email = original.email
		AND coalesce(copy.client_id, 0) = coalesce(c.client_id, 0)
)
WHERE EXISTS (
	SELECT 1 FROM leads l, campaigns c
	WHERE l.id = campaign_leads.lead_id AND c.id = campaign_leads.campaign_id
		AND coalesce(l.client_id, 0) <> coalesce(c.client_id, 0)
);--> statement-breakpoint
UPDATE `tags` SET `client_id` = (
	SELECT c.client_id FROM campaign_tags ct JOIN campaigns c ON c.id = ct.campaign_id
	WHERE ct.tag_id = tags.id ORDER BY coalesce(c.client_id, 0) LIMIT 1
);--> statement-breakpoint
INSERT INTO `tags` (account_id, client_id, name, created_at)
SELECT DISTINCT t.account_id, c.client_id, t.name, t.created_at
FROM tags t JOIN campaign_tags ct ON ct.tag_id = t.id JOIN campaigns c ON c.id = ct.campaign_id
WHERE coalesce(c.client_id, 0) <> coalesce(t.client_id, 0);--> statement-breakpoint
CREATE UNIQUE INDEX `tags_account_scope_name_idx` ON `tags` (`account_id`,coalesce("client_id", 0),`name`);--> statement-breakpoint
UPDATE `campaign_tags` SET `tag_id` = (
	SELECT copy.id FROM tags original, tags copy, campaigns c
	WHERE original.id = campaign_tags.tag_id AND c.id = campaign_tags.campaign_id
		AND copy.account_id = original.account_id AND copy.name = original.name
		AND coalesce(copy.client_id, 0) = coalesce(c.client_id, 0)
)
WHERE EXISTS (
	SELECT 1 FROM tags t, campaigns c
	WHERE t.id = campaign_tags.tag_id AND c.id = campaign_tags.campaign_id
		AND coalesce(t.client_id, 0) <> coalesce(c.client_id, 0)
);--> statement-breakpoint
-- A test filed in another client's folder leaves it (an account-wide folder may hold any test).
UPDATE `spam_tests` SET `folder_id` = NULL
WHERE folder_id IN (
	SELECT f.id FROM spam_test_folders f
	WHERE f.client_id IS NOT NULL AND f.client_id IS NOT spam_tests.client_id
);
