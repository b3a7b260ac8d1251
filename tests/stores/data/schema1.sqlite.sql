-- A flower SQLite session store of schema 1, as flower 0.x (before lease epochs) wrote it: sqlite3 .dump
PRAGMA application_id = 1718384498;
PRAGMA user_version = 1;
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE transcripts (
    id INTEGER PRIMARY KEY,
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    subpath TEXT NOT NULL,               -- '' for the main transcript
    mtime INTEGER NOT NULL,              -- storage write time, epoch ms
    UNIQUE (project_key, session_id, subpath)
);
INSERT INTO transcripts VALUES(1,'-repo','11111111-1111-4111-8111-111111111111','',1796142874227);
INSERT INTO transcripts VALUES(2,'-repo','11111111-1111-4111-8111-111111111111','subagents/agent-a1',1796142874233);
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,              -- commit order: the order load() returns
    transcript INTEGER NOT NULL,
    uuid TEXT,                           -- the idempotency key, when the entry has one
    payload TEXT NOT NULL                -- the entry as JSON
);
INSERT INTO entries VALUES(1,1,'u1','{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"Start."}}');
INSERT INTO entries VALUES(2,1,NULL,'{"type":"queue-operation","operation":"enqueue"}');
INSERT INTO entries VALUES(3,1,'a1','{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}}');
INSERT INTO entries VALUES(4,2,'s1','{"type":"user","uuid":"s1","message":{"role":"user","content":"x"}}');
CREATE TABLE summaries (
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    mtime INTEGER NOT NULL,
    data TEXT NOT NULL,                  -- fold_session_summary's opaque state, verbatim
    PRIMARY KEY (project_key, session_id)
);
INSERT INTO summaries VALUES('-repo','11111111-1111-4111-8111-111111111111',1796142874227,'{"is_sidechain":false,"first_prompt":"Start.","first_prompt_locked":true}');
CREATE TABLE clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_ms INTEGER NOT NULL             -- mtimes are strictly increasing across processes
);
INSERT INTO clock VALUES(1,1796142874233);
CREATE INDEX entries_by_transcript ON entries (transcript, id);
CREATE UNIQUE INDEX entries_by_uuid ON entries (transcript, uuid) WHERE uuid IS NOT NULL;
COMMIT;
