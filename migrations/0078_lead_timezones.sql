-- A lead's own IANA time zone (CONTRACT 23.1): null when none was given or the name was unknown. A
-- campaign with `send_in_lead_timezone` sends each record inside the schedule's hours in this zone.
ALTER TABLE leads ADD COLUMN timezone TEXT;

-- A CSV import counts the rows whose zone was not a known name, as the JSON import answers it.
ALTER TABLE lead_list_imports ADD COLUMN invalid_timezone INTEGER NOT NULL DEFAULT 0;
