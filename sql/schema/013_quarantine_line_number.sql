-- Where in its spool segment a quarantined line was: the 1-based line number in the file
-- (blank lines counted, as an editor counts), the number the quarantine's log message
-- gives, so a damaged line in a segment of thousands can be found from the table too.
-- Rows quarantined before this migration keep NULL: their number was never recorded.
ALTER TABLE quarantined_rows ADD COLUMN line_number INTEGER;
