-- Whether the claim that holds a record took it from rotation (it was unpinned), so a pass that dies
-- gives back to rotation only what rotation gave it: a first step pinned before its claim (a
-- subsequence's record on its parent's mailbox, a re-pinned record) keeps its mailbox. Every claim
-- sets it; it means nothing while claim_token is NULL.
ALTER TABLE `campaign_leads` ADD `claim_from_rotation` integer DEFAULT false NOT NULL;
