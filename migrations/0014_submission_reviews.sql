-- Submission reviews (onadata's SubmissionReview) and notes on submissions (onadata's Note).
--
-- A review's comment is a note on the reviewed record with instance_field '_review_status', as in
-- onadata; the record's stored JSON carries every note in `_notes` and the latest live review as
-- `_review_status`, `_review_comment` and `_review_date`, rewritten by each review write (and kept
-- by edits), so the data API, its queries and the exports read them with the record itself.
CREATE TABLE instance_notes (
  id              serial PRIMARY KEY,
  instance_id     integer NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
  note            text NOT NULL,
  instance_field  text,
  created_by      integer REFERENCES users(id) ON DELETE SET NULL,
  date_created    timestamptz NOT NULL DEFAULT now(),
  date_modified   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX instance_notes_instance_idx ON instance_notes (instance_id, id);

CREATE TABLE submission_reviews (
  id              serial PRIMARY KEY,
  instance_id     integer NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
  -- The comment; NULL when the review has none.
  note_id         integer REFERENCES instance_notes(id) ON DELETE SET NULL,
  -- '1' approved, '2' rejected, '3' pending.
  status          text NOT NULL DEFAULT '3' CHECK (status IN ('1', '2', '3')),
  created_by      integer REFERENCES users(id) ON DELETE SET NULL,
  date_created    timestamptz NOT NULL DEFAULT now(),
  date_modified   timestamptz NOT NULL DEFAULT now(),
  -- Deleting a review only marks it, as onadata does.
  deleted_at      timestamptz,
  deleted_by      integer REFERENCES users(id) ON DELETE SET NULL
);
-- A record's latest live review.
CREATE INDEX submission_reviews_instance_idx ON submission_reviews (instance_id, date_modified DESC, id DESC) WHERE deleted_at IS NULL;
