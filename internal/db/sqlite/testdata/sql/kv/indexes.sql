CREATE INDEX item_i ON item (i);
-- A trigger body holds ';', so it needs its own delimiter.
DELIMITER //
CREATE TRIGGER counter_changed AFTER UPDATE OF n ON counter
BEGIN
  UPDATE counter SET changed = changed + 1 WHERE id = NEW.id;
END//
DELIMITER ;
