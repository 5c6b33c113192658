-- A campaign is filed only in a folder of its own client scope or an account-wide one (ARCHITECTURE,
-- tags and folders): filings made before the rule (an owner's key filing client Y's campaign, or the
-- account's own, in client X's folder; a campaign moved to another client staying in its old client's
-- folder) leave that folder, so X no longer counts, nor unfiles, what it cannot see.
UPDATE campaigns SET folder_id = NULL
WHERE folder_id IN (SELECT f.id FROM campaign_folders f WHERE f.client_id IS NOT NULL AND f.client_id IS NOT campaigns.client_id);
