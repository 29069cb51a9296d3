import { execFileSync } from 'node:child_process';
import { mkdtemp, open, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A disk of the test's own: a tmpfs of `sizeMb` mounted on a temporary folder (root only: the
 * fault suite runs as root, as `npm test` does on this machine), for the scenarios that fill a
 * server's disk. A private server started with its data here sees ENOSPC once `fill()` has taken
 * what is left; `free()` gives it back, as an operator deleting old logs would.
 */
export interface SmallDisk {
  /** The mount point: give it to a private server as the parent of its data folder. */
  readonly path: string;
  /** Writes a filler file until the disk is full; resolves with the bytes it took. */
  fill(): Promise<number>;
  /** Removes the filler. */
  free(): Promise<void>;
  /** Unmounts the disk (its servers must be stopped first) and removes the mount point. */
  release(): Promise<void>;
}

const CHUNK = 1 << 20;

export async function mountSmallDisk(sizeMb: number): Promise<SmallDisk> {
  if (process.getuid?.() !== 0) throw new Error('mountSmallDisk needs root: a tmpfs is mounted for the disk-full scenarios');
  const path = await mkdtemp(join(tmpdir(), 'herald-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=1777`, 'tmpfs', path]);
  const filler = join(path, 'filler');
  return {
    path,
    async fill() {
      const file = await open(filler, 'a');
      let taken = 0;
      try {
        // Big writes first, then smaller ones for the last pages.
        for (let size = CHUNK; size >= 4096; size /= 4) {
          const zeros = Buffer.alloc(size);
          for (;;) {
            try {
              const { bytesWritten } = await file.write(zeros);
              taken += bytesWritten;
              if (bytesWritten < size) break;
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
              break;
            }
          }
        }
      } finally {
        await file.close();
      }
      return taken;
    },
    free: () => rm(filler, { force: true }),
    async release() {
      execFileSync('umount', ['-l', path]);
      await rmdir(path);
    },
  };
}
