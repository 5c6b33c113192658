-- Spintax's incremental distribution mode (CONTRACT 21.1): the k-th record of a campaign (0-based, in
-- the order records were added, i.e. by id) takes option k mod n of each spintax group. Each record
-- keeps its k (`spintax_modulo_index`), handed out from the campaign's counter by a trigger, so every
-- path that adds records (uploads, list pushes, subsequence pushes) numbers them the same way and the
-- engine reads k with the record instead of counting the records before it.

ALTER TABLE campaigns ADD COLUMN spintax_records INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaign_leads ADD COLUMN spintax_modulo_index INTEGER;

UPDATE campaign_leads SET spintax_modulo_index = r.k
FROM (SELECT id, row_number() OVER (PARTITION BY campaign_id ORDER BY id) - 1 AS k FROM campaign_leads) AS r
WHERE r.id = campaign_leads.id;
UPDATE campaigns SET spintax_records = (SELECT count(*) FROM campaign_leads WHERE campaign_id = campaigns.id);

CREATE TRIGGER campaign_leads_spintax_index AFTER INSERT ON campaign_leads BEGIN
  UPDATE campaign_leads SET spintax_modulo_index = (SELECT spintax_records FROM campaigns WHERE id = NEW.campaign_id) WHERE id = NEW.id;
  UPDATE campaigns SET spintax_records = spintax_records + 1 WHERE id = NEW.campaign_id;
END;
