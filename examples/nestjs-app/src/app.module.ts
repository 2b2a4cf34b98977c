/**
 * The application: ZooKeeper (ZkModule), scheduling, health checks, the report job and the
 * inventory. `AppModule.register` names the instance and says where ZooKeeper is.
 */
import { type DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { ZkModule } from '@zkrx/nestjs';
import { ZkHealthIndicator } from '@zkrx/nestjs/terminus';
import { HealthController } from './health.controller';
import { InventoryController } from './inventory.controller';
import { InventoryService } from './inventory.service';
import { INSTANCE_NAME, Journal } from './journal';
import { ReportJob } from './report-job';

export interface AppSettings {
  /** This instance's name: its election id too. */
  readonly instance: string;
  /** ZooKeeper's connect string. */
  readonly connect: string;
  /** Where the instance records what it ran. */
  readonly journal: Journal;
}

@Module({})
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest dynamic module is a class with a static factory
export class AppModule {
  static register(settings: AppSettings): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ScheduleModule.forRoot(),
        TerminusModule.forRoot({ logger: false }),
        ZkModule.forRoot({
          connect: settings.connect,
          sessionTimeoutMs: 4_000,
          id: settings.instance,
          isGlobal: true,
        }),
      ],
      controllers: [InventoryController, HealthController],
      providers: [
        { provide: INSTANCE_NAME, useValue: settings.instance },
        { provide: Journal, useValue: settings.journal },
        ReportJob,
        InventoryService,
        ZkHealthIndicator,
      ],
    };
  }
}
