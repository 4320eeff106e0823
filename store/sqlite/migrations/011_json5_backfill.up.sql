-- Python's json.dumps writes NaN and Infinity, which json_valid() without
-- flags refuses though json_extract() reads them: 002's back-fills passed
-- over such rows. JSON5 validity (flag 2) admits them.
UPDATE runs SET wait_key = json_extract(run_json, '$.waiting.wait_key')
  WHERE status = 'waiting' AND wait_key IS NULL AND json_valid(run_json, 2);
UPDATE ledger SET completed_key = COALESCE(json_extract(record_json, '$.idempotency_key'), '')
  WHERE completed_key IS NULL AND json_valid(record_json, 2)
    AND json_extract(record_json, '$.status') = 'completed';
