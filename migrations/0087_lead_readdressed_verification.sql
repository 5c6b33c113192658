-- A lead's verification is of its address: a new address has never been checked (CONTRACT 22, null =
-- never checked), so an address corrected after a typo is not kept out of every campaign by the old
-- one's verdict, and the next verification job takes it up. As leads_esp_readdressed forgets the provider.
CREATE TRIGGER leads_verification_readdressed AFTER UPDATE OF email ON leads
WHEN NEW.email IS NOT OLD.email BEGIN
  UPDATE leads SET verification_status = NULL, verification_reason = NULL, verified_at = NULL WHERE id = NEW.id;
END;
