-- A flower PostgreSQL store of schema version 1, as flower wrote it before lease epochs: pg_dump
-- (--inserts --no-owner) with the schema's name replaced by {schema}, and one lease row added by hand
-- (flower 1 deleted a row when its lease ended; this one stands for a lease held during the upgrade).
CREATE SCHEMA {schema};
CREATE TABLE {schema}.blobs (
    sha256 text NOT NULL,
    size bigint NOT NULL,
    data bytea NOT NULL
);
CREATE TABLE {schema}.entries (
    id bigint NOT NULL,
    transcript bigint NOT NULL,
    uuid text,
    payload text NOT NULL
);
CREATE SEQUENCE {schema}.entries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;
ALTER SEQUENCE {schema}.entries_id_seq OWNED BY {schema}.entries.id;
CREATE TABLE {schema}.files (
    session_id text NOT NULL,
    path text NOT NULL,
    sha256 text NOT NULL,
    mode integer NOT NULL,
    mtime bigint NOT NULL
);
CREATE TABLE {schema}.leases (
    session_id text NOT NULL,
    holder text NOT NULL,
    backend_pid integer NOT NULL,
    since timestamp with time zone NOT NULL
);
CREATE TABLE {schema}.meta (
    key text NOT NULL,
    value text NOT NULL
);
CREATE TABLE {schema}.places (
    session_id text NOT NULL,
    project_key text NOT NULL,
    workspace text NOT NULL,
    workbench text NOT NULL,
    runner text NOT NULL,
    first_seen bigint NOT NULL,
    last_seen bigint NOT NULL
);
CREATE TABLE {schema}.spills (
    digest text NOT NULL,
    session_id text,
    row_json text NOT NULL
);
CREATE TABLE {schema}.summaries (
    project_key text NOT NULL,
    session_id text NOT NULL,
    mtime bigint NOT NULL,
    data text NOT NULL
);
CREATE TABLE {schema}.transcripts (
    id bigint NOT NULL,
    project_key text NOT NULL,
    session_id text NOT NULL,
    subpath text NOT NULL,
    mtime bigint NOT NULL
);
CREATE SEQUENCE {schema}.transcripts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;
ALTER SEQUENCE {schema}.transcripts_id_seq OWNED BY {schema}.transcripts.id;
ALTER TABLE ONLY {schema}.entries ALTER COLUMN id SET DEFAULT nextval('{schema}.entries_id_seq'::regclass);
ALTER TABLE ONLY {schema}.transcripts ALTER COLUMN id SET DEFAULT nextval('{schema}.transcripts_id_seq'::regclass);
INSERT INTO {schema}.entries VALUES (1, 1, 'u1', '{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"Start."}}');
INSERT INTO {schema}.entries VALUES (2, 1, NULL, '{"type":"queue-operation","operation":"enqueue"}');
INSERT INTO {schema}.entries VALUES (3, 1, 'a1', '{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}}');
INSERT INTO {schema}.entries VALUES (4, 2, 's1', '{"type":"user","uuid":"s1","message":{"role":"user","content":"x"}}');
INSERT INTO {schema}.meta VALUES ('schema_version', '1');
INSERT INTO {schema}.summaries VALUES ('-repo', '11111111-1111-4111-8111-111111111111', 1796142874412, '{"is_sidechain":false,"first_prompt":"Start.","first_prompt_locked":true}');
INSERT INTO {schema}.transcripts VALUES (1, '-repo', '11111111-1111-4111-8111-111111111111', '', 1796142874412);
INSERT INTO {schema}.transcripts VALUES (2, '-repo', '11111111-1111-4111-8111-111111111111', 'subagents/agent-a1', 1796142874422);
SELECT setval('{schema}.entries_id_seq', 4, true);
SELECT setval('{schema}.transcripts_id_seq', 2, true);
ALTER TABLE ONLY {schema}.blobs
    ADD CONSTRAINT blobs_pkey PRIMARY KEY (sha256);
ALTER TABLE ONLY {schema}.entries
    ADD CONSTRAINT entries_pkey PRIMARY KEY (id);
ALTER TABLE ONLY {schema}.files
    ADD CONSTRAINT files_pkey PRIMARY KEY (session_id, path);
ALTER TABLE ONLY {schema}.leases
    ADD CONSTRAINT leases_pkey PRIMARY KEY (session_id);
ALTER TABLE ONLY {schema}.meta
    ADD CONSTRAINT meta_pkey PRIMARY KEY (key);
ALTER TABLE ONLY {schema}.places
    ADD CONSTRAINT places_pkey PRIMARY KEY (session_id, workspace, workbench);
ALTER TABLE ONLY {schema}.spills
    ADD CONSTRAINT spills_pkey PRIMARY KEY (digest);
ALTER TABLE ONLY {schema}.summaries
    ADD CONSTRAINT summaries_pkey PRIMARY KEY (project_key, session_id);
ALTER TABLE ONLY {schema}.transcripts
    ADD CONSTRAINT transcripts_pkey PRIMARY KEY (id);
ALTER TABLE ONLY {schema}.transcripts
    ADD CONSTRAINT transcripts_project_key_session_id_subpath_key UNIQUE (project_key, session_id, subpath);
CREATE INDEX entries_by_transcript ON {schema}.entries USING btree (transcript, id);
CREATE UNIQUE INDEX entries_by_uuid ON {schema}.entries USING btree (transcript, uuid) WHERE (uuid IS NOT NULL);
CREATE INDEX spills_by_session ON {schema}.spills USING btree (session_id);
CREATE INDEX transcripts_by_session ON {schema}.transcripts USING btree (session_id);
ALTER TABLE ONLY {schema}.entries
    ADD CONSTRAINT entries_transcript_fkey FOREIGN KEY (transcript) REFERENCES {schema}.transcripts(id) ON DELETE CASCADE;
ALTER TABLE ONLY {schema}.files
    ADD CONSTRAINT files_sha256_fkey FOREIGN KEY (sha256) REFERENCES {schema}.blobs(sha256);
INSERT INTO {schema}.leases VALUES ('11111111-1111-4111-8111-111111111111', 'old-runner pid 1', 999999, now());
