-- The inbox search's index (issue 27 item 4): the folded texts it matches (leads.search_folded,
-- and events.body_folded of replies) in FTS5 trigram tables, so a needle of three characters or
-- more finds its leads and replies without reading the others. case_sensitive 1: the texts and the
-- needle are folded in code already (src/platform/text-search.ts), so a match is exactly "the
-- folded text contains the folded needle". Contentless (the texts stay in their own tables); a
-- document's rowid is account_id * 2^40 + its row id, so a search reads one account's range only.
-- Each document ends with two U+0001, so every character of the text starts a trigram: a needle of
-- one or two characters is found through the trigrams it begins, listed by the fts5vocab tables
-- (lead_search_terms, reply_search_terms). A needle holding U+0001 is tested record by record.
-- Triggers keep both in the same transaction as the rows they index.
CREATE VIRTUAL TABLE `lead_search` USING fts5(`doc`, tokenize = 'trigram case_sensitive 1', content = '', columnsize = 0);
--> statement-breakpoint
CREATE VIRTUAL TABLE `reply_search` USING fts5(`doc`, tokenize = 'trigram case_sensitive 1', content = '', columnsize = 0);
--> statement-breakpoint
CREATE VIRTUAL TABLE `lead_search_terms` USING fts5vocab(`lead_search`, 'row');
--> statement-breakpoint
CREATE VIRTUAL TABLE `reply_search_terms` USING fts5vocab(`reply_search`, 'row');
--> statement-breakpoint
INSERT INTO lead_search (rowid, doc) SELECT account_id * 1099511627776 + id, search_folded || char(1, 1) FROM leads WHERE search_folded IS NOT NULL;
--> statement-breakpoint
INSERT INTO reply_search (rowid, doc) SELECT account_id * 1099511627776 + id, body_folded || char(1, 1) FROM events
  WHERE type = 'REPLY' AND body_folded IS NOT NULL;
--> statement-breakpoint
CREATE TRIGGER `leads_search_insert` AFTER INSERT ON `leads` WHEN NEW.search_folded IS NOT NULL BEGIN
  INSERT INTO lead_search (rowid, doc) VALUES (NEW.account_id * 1099511627776 + NEW.id, NEW.search_folded || char(1, 1));
END;
--> statement-breakpoint
-- A contentless table forgets a document by being given its old text back ('delete').
CREATE TRIGGER `leads_search_update` AFTER UPDATE OF `search_folded`, `account_id` ON `leads`
WHEN OLD.search_folded IS NOT NEW.search_folded OR OLD.account_id <> NEW.account_id BEGIN
  INSERT INTO lead_search (lead_search, rowid, doc)
    SELECT 'delete', OLD.account_id * 1099511627776 + OLD.id, OLD.search_folded || char(1, 1) WHERE OLD.search_folded IS NOT NULL;
  INSERT INTO lead_search (rowid, doc)
    SELECT NEW.account_id * 1099511627776 + NEW.id, NEW.search_folded || char(1, 1) WHERE NEW.search_folded IS NOT NULL;
END;
--> statement-breakpoint
CREATE TRIGGER `leads_search_delete` AFTER DELETE ON `leads` WHEN OLD.search_folded IS NOT NULL BEGIN
  INSERT INTO lead_search (lead_search, rowid, doc) VALUES ('delete', OLD.account_id * 1099511627776 + OLD.id, OLD.search_folded || char(1, 1));
END;
--> statement-breakpoint
CREATE TRIGGER `events_search_insert` AFTER INSERT ON `events` WHEN NEW.type = 'REPLY' AND NEW.body_folded IS NOT NULL BEGIN
  INSERT INTO reply_search (rowid, doc) VALUES (NEW.account_id * 1099511627776 + NEW.id, NEW.body_folded || char(1, 1));
END;
--> statement-breakpoint
CREATE TRIGGER `events_search_update` AFTER UPDATE OF `type`, `body_folded`, `account_id` ON `events`
WHEN OLD.type IS NOT NEW.type OR OLD.body_folded IS NOT NEW.body_folded OR OLD.account_id <> NEW.account_id BEGIN
  INSERT INTO reply_search (reply_search, rowid, doc)
    SELECT 'delete', OLD.account_id * 1099511627776 + OLD.id, OLD.body_folded || char(1, 1) WHERE OLD.type = 'REPLY' AND OLD.body_folded IS NOT NULL;
  INSERT INTO reply_search (rowid, doc)
    SELECT NEW.account_id * 1099511627776 + NEW.id, NEW.body_folded || char(1, 1) WHERE NEW.type = 'REPLY' AND NEW.body_folded IS NOT NULL;
END;
--> statement-breakpoint
CREATE TRIGGER `events_search_delete` AFTER DELETE ON `events` WHEN OLD.type = 'REPLY' AND OLD.body_folded IS NOT NULL BEGIN
  INSERT INTO reply_search (reply_search, rowid, doc) VALUES ('delete', OLD.account_id * 1099511627776 + OLD.id, OLD.body_folded || char(1, 1));
END;
