-- Keep a memory's row whole in its heap page: the toaster otherwise starts moving columns out of
-- line once a row passes 2 kB, which a 512-d embedding (2 kB on its own) always does, so every
-- exact scan and every lexical score read the vector, the text and the tsvector back from the
-- TOAST table. Rows that would not fit a page are still toasted. Applies to rows written from now on.
ALTER TABLE memories SET (toast_tuple_target = 8160);
