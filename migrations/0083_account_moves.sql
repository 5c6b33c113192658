-- Accounts moving in or out of this shard (src/moves/). While a row's `open` is 0, the fence
-- triggers the move creates on this shard refuse every write to the account's rows; the mover opens
-- it inside its own batches only. `to_shard` is null on the shard the account moves into (until the
-- move is done, when the row goes) and names the new shard on the one it left: that row stays, so
-- a link or queue message naming one of the account's old ids is sent on, and for ten minutes a
-- writer that still thinks the account is here is refused rather than lost (then `open` turns 1).
-- No reference to accounts: it outlives the account's rows here.
CREATE TABLE account_moves (
  account_id INTEGER PRIMARY KEY NOT NULL,
  to_shard INTEGER,
  -- copying: the account's rows are being copied (writes refused); moved: the directory names
  -- to_shard, and whatever names the account's rows goes there.
  state TEXT NOT NULL,
  open INTEGER NOT NULL DEFAULT 0,
  since INTEGER NOT NULL
);
