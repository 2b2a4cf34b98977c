/**
 * POST /inventory/restock: served by any instance, run by one at a time.
 */
import { Controller, Post } from '@nestjs/common';
import { InventoryService, type Restocked } from './inventory.service';

@Controller('inventory')
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Post('restock')
  restock(): Promise<Restocked> {
    return this.inventory.restock();
  }
}
