-- A mailbox from_name holding a line break or tab was accepted, and then every send from the mailbox
-- failed (a From header cannot carry it). Such names are refused when saved now (issue 23); the names
-- stored before become one line, each CR, LF or tab a space.
UPDATE `email_accounts`
SET `from_name` = trim(replace(replace(replace(`from_name`, char(13), ' '), char(10), ' '), char(9), ' '))
WHERE instr(`from_name`, char(13)) > 0 OR instr(`from_name`, char(10)) > 0 OR instr(`from_name`, char(9)) > 0;
