-- The header block of the seed's copy of a spam-test email, as it arrived (CONTRACT 21.6: the
-- email-headers report, and the sending IP and reverse name of the rdns-details report). At most
-- 64 KB; null for results recorded before, or by an operator's checker.
ALTER TABLE `spam_test_results` ADD `raw_headers` text;
